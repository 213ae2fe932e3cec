import type { RunLiveness } from '../../src/run/liveness.js';
import type { ProcessRecord, RunRecord } from '../../src/run/types.js';

// The run the stop tests look at: agg-router with a frontend (pid 100) and two workers (101, 102),
// its supervisor pid 50, caught while it is being stopped: the frontend has ended on SIGTERM and
// both workers, which ignore it, still run. status and teardown tests vary only whether that
// supervisor still lives.

/** One recorded process of that run (ready, started at 01:00). */
export const recordedProcess = (name: string, pid: number, o: Partial<ProcessRecord> = {}): ProcessRecord => ({
  name, role: name === 'frontend' ? 'frontend' : 'agg', pid, pgid: pid, startTicks: 500, startedAt: '2026-12-02T01:00:00.000Z', argv: [], env: {},
  ports: {}, gpuMemoryUtilization: null, state: 'ready', kvTokens: null, exitCode: null, signal: null, log: `/x/${name}.log`, descendants: [], ...o,
});

/** Its record, `stopping` since 01:05. */
export const stoppingRecord = (o: Partial<RunRecord> = {}): RunRecord => ({
  id: 'r', recipe: 'agg-router', model: 'm', createdAt: '2026-12-02T01:00:00.000Z', updatedAt: '2026-12-02T01:05:00.000Z',
  supervisor: { pid: 50, startTicks: 40, detached: false }, state: 'stopping', frontendUrl: 'http://f',
  plan: {} as RunRecord['plan'], processes: [recordedProcess('frontend', 100), recordedProcess('agg-0', 101), recordedProcess('agg-1', 102)], ...o,
});

/** Its liveness: the frontend gone, both workers running; `supervisor`: whether pid 50 still lives. */
export const frontendGone = (supervisor: boolean, o: Partial<RunLiveness> = {}): RunLiveness => {
  const pids = supervisor ? [50, 101, 102] : [101, 102];
  return {
    supervisor, processes: true, marked: [], pids, ownedPids: pids,
    perProcess: [
      { name: 'frontend', alive: false, recycled: false, pids: [] },
      { name: 'agg-0', alive: true, recycled: false, pids: [101] },
      { name: 'agg-1', alive: true, recycled: false, pids: [102] },
    ],
    ...o,
  };
};
