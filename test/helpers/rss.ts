import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, FIXTURES, ROOT } from './cli.js';

export interface MeasuredRun {
  code: number;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** Peak resident memory of the CLI process, MiB. */
  maxRssMiB: number;
  /** Bytes the CLI process read (rchar of /proc/self/io at exit: its own modules included), MiB. */
  readMiB: number;
}

/**
 * Runs the built CLI with a preload that reports its peak RSS on exit. `stdout: 'ignore'` for
 * commands whose output is huge (it is then not collected in the test's memory either).
 */
export async function runCliMeasured(
  args: string[],
  env: Record<string, string | undefined>,
  o: { timeoutMs?: number; stdout?: 'pipe' | 'ignore' } = {},
): Promise<MeasuredRun> {
  const dir = mkdtempSync(join(tmpdir(), 'dd-rss-'));
  const out = join(dir, 'rss');
  try {
    const t0 = performance.now();
    const r = await execa(process.execPath, ['-r', join(FIXTURES, 'hostile', 'rss-hook.cjs'), BIN, ...args], {
      env: { ...env, DD_RSS_OUT: out }, extendEnv: false, reject: false, timeout: o.timeoutMs ?? 60_000, cwd: ROOT,
      stdin: 'ignore', stdout: o.stdout ?? 'pipe',
    });
    const kib = Number(readFileSync(out, 'utf8'));
    const read = Number(readFileSync(`${out}.io`, 'utf8'));
    return { code: r.exitCode ?? -1, stdout: String(r.stdout ?? ''), stderr: String(r.stderr), durationMs: performance.now() - t0, maxRssMiB: kib / 1024, readMiB: read / 1024 / 1024 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
