import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, SAMPLES, tempHome } from '../helpers/cli.js';

// diagnose scans in WebAssembly where Node has it, and in JavaScript where it does not (`node
// --jitless`, which some locked-down machines set in NODE_OPTIONS). A user must get the same report
// either way: same findings, counts, line numbers and quotes.

const home = tempHome('dd-e2e-nowasm-');
afterAll(() => home.cleanup());

describe('diagnose without WebAssembly', () => {
  it('reports exactly what it reports with it, on a log of many chunks', async () => {
    const logs = join(SAMPLES, 'logs');
    const samples = readdirSync(logs).filter((f) => f.endsWith('.log')).map((f) => readFileSync(join(logs, f), 'utf8'));
    // ~3 MB: six 512 KiB chunks, lines cut by every chunk end, findings all over.
    const parts: string[] = [];
    for (let size = 0, i = 0; size < 3_000_000; i++) {
      const s = samples[i % samples.length];
      parts.push(s.endsWith('\n') ? s : `${s}\n`);
      size += s.length + 1;
    }
    const log = join(home.dir, 'many-chunks.log');
    writeFileSync(log, parts.join(''));
    const env = fakeEnv(home);
    const withWasm = await runCli(['diagnose', '--json', log], env);
    const without = await runCli(['diagnose', '--json', log], { ...env, NODE_OPTIONS: '--jitless' }, { timeoutMs: 60_000 });
    expect(without.stderr).not.toMatch(/error/i);
    expect(withWasm.code).toBe(1);
    expect(without.code).toBe(withWasm.code);
    expect(JSON.parse(without.stdout)).toEqual(JSON.parse(withWasm.stdout));
    expect(JSON.parse(withWasm.stdout).findings.length).toBeGreaterThan(3);
  }, 90_000);
});
