import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

  it('a restart that a teardown overtakes: the restart says the run is stopping, never degraded; teardown stops it cleanly', { timeout: 90_000 }, async () => {
    const s = await up.setup({ FAKE_WORKER_SLOW_MS: '30000' });
    // Only agg-0 reads the file (at each start): empty at first; then its restart is slow to come back.
    const scenario = join(s.dir, 'agg-0.scenario');
    writeFileSync(scenario, '');
    s.env[`FAKE_WORKER_SCENARIO_FILE_${s.ports.system}`] = scenario;
    const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(0);
    writeFileSync(scenario, 'slow');
    const restart = runCli(['restart', 'agg-0', '--grace', '2', '--json'], s.env, { timeoutMs: 60_000 });
    // The restart is under way (agg-0 started again, not ready): then teardown.
    const { waitUntil } = await import('../helpers/proc-trees.js');
    await waitUntil(() => (records(s.stateDir)[0].processes.find((p) => p.name === 'agg-0')!.restarts === 1 ? true : null), 'agg-0 to be started again', 30_000);
    const down = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout + down.stderr).toBe(0);
    const rs = await restart;
    expect(rs.code).toBe(1);
    const doc = JSON.parse(rs.stdout);
    expect(doc).toMatchObject({ ok: false, reason: 'the run was stopped while it restarted' });
    expect(doc.runState).not.toBe('degraded');
    expect(doc.status).not.toBe('degraded');
    expect(records(s.stateDir)[0].state).toBe('stopped');
  });
});
