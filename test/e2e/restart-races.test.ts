import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { records, upHarness } from '../helpers/up-run.js';

// Restarts that meet: two `dynamo-dev restart` of the same worker at once (the second follows the
// first's restart and reports its outcome), and a restart racing a teardown (the run that teardown
// stopped cleanly is stopped, not degraded).

const up = upHarness('dd-restart-race-');
afterEach(() => up.cleanup());

async function readyRun() {
  const s = await up.setup();
  const r = await runCli(['up', 'mocker', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
  expect(r.code, r.stderr).toBe(0);
  return s;
}

describe('restarts that meet', () => {
  it('two restarts of the same worker at once: both exit 0 and say it is ready again; the worker was started again once', { timeout: 90_000 }, async () => {
    const s = await readyRun();
    const [a, b] = await Promise.all([0, 1].map(() => runCli(['restart', 'agg-0', '--grace', '2'], s.env, { timeoutMs: 80_000 })));
    for (const r of [a, b]) {
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/✓ agg-0 is ready again .*; run \S+ is ready$/m);
    }
    expect(a.stdout + b.stdout).toMatch(/agg-0 is already being restarted by another restart; following it/);
    expect(records(s.stateDir)[0].processes.find((p) => p.name === 'agg-0')!.restarts).toBe(1);
  });
});
