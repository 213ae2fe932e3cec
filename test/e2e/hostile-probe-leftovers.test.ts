import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { isAlive, killStarted, track } from '../helpers/proc-trees.js';
import { freeBlock } from '../helpers/ports.js';

// Adversarial leftovers (issue 26): before the run starts, `up` runs the recipe's interpreter to read
// the installed Dynamo version. An interpreter that double-forks a helper (setsid: out of its group
// and tree, adopted by init) on every start left one behind that carried no run marker: teardown
// never found it and said "nothing remains" while it lived. The probe now runs with the run's marker.

const homes: ReturnType<typeof tempHome>[] = [];
afterEach(() => {
  killStarted();
  for (const h of homes.splice(0)) h.cleanup();
});

describe('a helper the interpreter double-forks while up probes it', () => {
  it('is the run\'s: teardown stops it with the others and nothing of it remains', async () => {
    const h = tempHome('dd-probe-left-');
    homes.push(h);
    const pids = join(h.dir, 'helpers');
    const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120', HELPER_PIDS: pids } });
    const readPids = () => (existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number) : []);
    const base = await freeBlock(5_000, 300, 20, [0, 1, 10]);
    try {
      const up = await runCli(['up', 'agg', '--detach', '--no-preflight', '--python', join(FIXTURES, 'hostile', 'python-always-double-forks'),
        '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`], env, { timeoutMs: 30_000 });
      expect(up.code, up.stderr).toBe(0);
      // The version probe's helper, then one per process of the run (frontend, agg-0).
      expect(readPids().length).toBeGreaterThanOrEqual(3);
      const down = await runCli(['teardown', '--grace', '2', '--json'], env, { timeoutMs: 30_000 });
      const doc = JSON.parse(down.stdout) as { stopped: { name: string; pid: number }[]; remaining: unknown[] };
      expect(down.code, down.stdout).toBe(0);
      expect(doc.remaining).toEqual([]);
      for (const pid of readPids()) expect(isAlive(pid), `helper ${pid} outlived teardown: ${down.stdout}`).toBe(false);
    } finally {
      readPids().forEach(track);
    }
  });
});
