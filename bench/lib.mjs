// Shared helpers for the benchmark scripts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(ROOT, 'bin', 'dynamo-dev.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures');

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Wall time of one run of a command, in ms. */
export function timeRun(cmd, args, env = process.env) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  return { ms: performance.now() - t0, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The environment the e2e tests use: fakes first on PATH and PYTHONPATH, a temp state dir. */
export function fakeEnv(vars = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'dd-bench-'));
  return {
    ...process.env,
    PATH: [join(FIXTURES, 'bin', 'gpu'), join(FIXTURES, 'bin', 'ucx'), process.env.PATH].join(delimiter),
    PYTHONPATH: join(FIXTURES, 'python'),
    PYTHONDONTWRITEBYTECODE: '1',
    DYNAMO_DEV_HOME: join(dir, 'state'),
    HF_HUB_CACHE: join(dir, 'hub'),
    FAKE_NVIDIA_SMI: 'laptop-570',
    FAKE_UCX_INFO: 'single-host',
    NO_COLOR: '1',
    ...vars,
  };
}

export function report(rows) {
  const w = Math.max(...rows.map((r) => r[0].length));
  for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`);
}
