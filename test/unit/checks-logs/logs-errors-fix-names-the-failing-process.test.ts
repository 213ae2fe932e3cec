import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/logs.errors.js';
import { fakeFacts } from '../../helpers/facts.js';
import { finding, logSet } from './log-sets.js';

// The fix of logs.errors is the first error's, filled in for the process whose log holds it: an
// error in agg-1's log must not send the user to the frontend's log.
describe('logs.errors: the fix names the process whose log has the error', () => {
  it('an error in the second file names that file\'s process', async () => {
    const A1 = '/runs/r/logs/agg-1.log';
    const err = finding('vllm.engine-dead', A1, 40, 'EngineDeadError', { severity: 'error', fix: 'read it: `dynamo-dev logs PROCESS --lines 80`' });
    const logs = logSet('run', [
      { path: '/runs/r/logs/frontend.log', process: 'frontend', role: 'frontend' },
      { path: A1, process: 'agg-1', role: 'agg' },
    ], [err]);
    const r = await check.run(fakeFacts({ logs }));
    expect(r.status).toBe('fail');
    expect(r.fix).toBe('read it: `dynamo-dev logs agg-1 --lines 80`');
  });
});
