import { expect, it } from 'vitest';
import { formatRestartStep } from '../../../src/ui/restart-report.js';

// A restart whose spawn failed has no pid: it printed "started agg-0 (pid ?)" right above its ✗
// verdict. Nothing started, so no "started" line; the verdict says why.
it('"started" is said only of a process that has a pid', () => {
  const marker = '--- dynamo-dev restart: agg-0 stopped and started again (restart 1) ---';
  expect(formatRestartStep({ event: 'starting', process: 'agg-0', pid: null, log: '/x/agg-0.log', marker })).toBeNull();
  expect(formatRestartStep({ event: 'starting', process: 'agg-0', pid: 4242, log: '/x/agg-0.log', marker })).toBe(`  started agg-0 (pid 4242); its log continues after the line "${marker}"\n`);
});
