import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

// Run records for the tests of what `diagnose` says about a run's processes that ended.

export const proc = (name: string, o: Partial<ProcessRecord> = {}): ProcessRecord => ({
  name, role: name === 'frontend' ? 'frontend' : 'agg', pid: 100, pgid: 100, startTicks: 5, startedAt: null, argv: [], env: {}, ports: {},
  gpuMemoryUtilization: null, state: 'stopped', kvTokens: null, exitCode: null, signal: null, log: `/s/${name}.log`, descendants: [], ...o,
});

export const record = (processes: ProcessRecord[]): RunRecord => ({
  id: 'r1', recipe: 'agg', model: 'm', createdAt: '', updatedAt: '', supervisor: { pid: 1, startTicks: 1, detached: false },
  state: 'failed', frontendUrl: '', plan: {} as RunRecord['plan'], processes,
});
