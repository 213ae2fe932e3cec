import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { freeBlock } from '../helpers/ports.js';
import { groupMembersWith } from '../helpers/runs.js';

// `up --script` produces a standalone bash script; run it for real against the fakes.


const homes: ReturnType<typeof tempHome>[] = [];
const started: ChildProcess[] = [];
const groups: number[] = [];
/** RUN_DIR=... as the script's processes inherit it: what makes a group member this test's. */
let mine = '';

afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const g of groups.splice(0)) if (groupMembersWith(g, mine).length > 0) try { process.kill(-g, 'SIGKILL'); } catch { /* gone */ }
  for (const h of homes.splice(0)) h.cleanup();
});

describe('up --script', () => {
  it('runs standalone: starts agg-router, waits for real readiness, and its trap stops every group on SIGTERM', async () => {
    const h = tempHome('dd-script-');
    homes.push(h);
    // 11,000-20,999: apart from up.test.ts (21,000-30,999) and below the ephemeral range (32768+).
    const base = await freeBlock(11_000, 500, 20, [0, 1, 2, 5, 6]);
    const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120' } });
    const gen = await runCli(['up', 'agg-router', '--script', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`,
      '--set', `ports.kvEvents=${base + 5}`], env);
    expect(gen.code).toBe(0);
    const path = join(h.dir, 'run.sh');
    writeFileSync(path, gen.stdout);

    mine = `RUN_DIR=${join(h.dir, 'run')}`;
    const bash = spawn('bash', [path], { env: { ...env, RUN_DIR: join(h.dir, 'run') } as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(bash);
    let out = '';
    const ready = new Promise<void>((resolve, reject) => {
      bash.stdout!.on('data', (d) => {
        out += d;
        for (const m of out.matchAll(/started \S+ \(pid (\d+)\)/g)) if (!groups.includes(Number(m[1]))) groups.push(Number(m[1]));
        if (out.includes('Ctrl-C stops everything')) resolve();
      });
      bash.on('exit', (code) => reject(new Error(`script exited ${code} before ready:\n${out}`)));
    });
    await ready;
    expect(out).toMatch(/agg-0: GPU KV cache size: [\d,]+ tokens/);
    expect(out).toMatch(/agg-1: GPU KV cache size: [\d,]+ tokens/);
    // agg-1 was started only after agg-0's KV line.
    expect(out.indexOf('waiting for agg-0 to log its KV cache size')).toBeLessThan(out.indexOf('started agg-1'));
    expect(groups).toHaveLength(3);
    const models = await (await fetch(`http://127.0.0.1:${base}/v1/models`)).json() as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toContain('Qwen/Qwen3-0.6B');

    // Each group is this test's by RUN_DIR, so the check after the stop can tell.
    for (const g of groups) expect(groupMembersWith(g, mine).length).toBeGreaterThan(0);
    const exited = new Promise<number | null>((r) => bash.on('exit', (code) => r(code)));
    bash.kill('SIGTERM');
    expect(await exited).toBe(143);
    for (const g of groups) expect(groupMembersWith(g, mine)).toEqual([]);
  });
});
