import { afterEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { records, upHarness } from '../helpers/up-run.js';

// `up --name X` where X is another run's id: `--run X` (teardown, restart) would then mean that
// other run, and teardown by name would stop the wrong one. Refused in one line, nothing started.

const up = upHarness('dd-up-name-id-');
afterEach(() => up.cleanup());

it('up --name ID-OF-A-LIVE-RUN: exit 2, one line naming --name, nothing started; teardown --run ID still stops that run', async () => {
  const s = await up.setup();
  const first = await runCli(['up', 'agg-router', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
  expect(first.code, first.stderr).toBe(0);
  const [rec] = records(s.stateDir);
  const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--name', rec.id], s.env, { timeoutMs: 25_000 });
  expect([r.code, r.stderr]).toEqual([2, `dynamo-dev: --name: ${rec.id} is the id of a run in ${s.stateDir}; --run ${rec.id} would mean that run: choose another name`]);
  expect(records(s.stateDir).map((x) => x.id)).toEqual([rec.id]);
  const down = await runCli(['teardown', '--run', rec.id, '--grace', '2'], s.env, { timeoutMs: 30_000 });
  expect(down.code, down.stdout).toBe(0);
});
