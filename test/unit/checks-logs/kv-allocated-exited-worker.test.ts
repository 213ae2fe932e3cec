import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/kv.allocated.js';
import { fakeFacts } from '../../helpers/facts.js';
import { routerPlan, routerRecipe, runOf } from './helpers.js';
import { logSet } from './log-sets.js';

// doctor on a stopped run whose worker died before it logged a KV size, with no known failure
// signature in its log: the only explanation is the exit finding (run/exits.ts, added to the
// run's scan), and the fix is the command that reads that worker's log, with the run's id filled in.
const A1 = '/runs/r/logs/agg-1.log';

describe('kv.allocated: a worker that exited before its KV line', () => {
  it('names the exit and points at that worker\'s log', async () => {
    const plan = routerPlan();
    const run = runOf(plan, {}, { recipe: routerRecipe() });
    const exited = { code: 'run.process-exited', severity: 'error' as const, count: 1, line: 12, text: 'agg-1 killed by SIGKILL at 10:01:00: Loading safetensors checkpoint shards' };
    const logs = logSet('run', [
      { path: '/runs/r/logs/frontend.log', process: 'frontend', role: 'frontend' },
      { path: '/runs/r/logs/agg-0.log', process: 'agg-0', role: 'agg', kvTokens: 4096 },
      { path: A1, process: 'agg-1', role: 'agg', kvTokens: null, findings: [exited] },
    ]);
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.status).toBe('fail');
    expect(r.details[0]).toBe(`agg-1 never logged its KV cache size: run.process-exited at agg-1 (${A1}:12): ${exited.text}`);
    // Every word filled in: the command can be pasted as it is.
    expect(r.fix).toBe("read its log: `dynamo-dev logs agg-1 --run 20261130-101500-agg-router --lines 80`");
  });
});
