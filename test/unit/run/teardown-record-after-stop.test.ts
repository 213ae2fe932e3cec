import { describe, expect, it } from 'vitest';
import { markStopped, runTargets } from '../../../src/run/teardown.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

// What `status` shows of a run after `teardown` (the record markStopped writes back) and whom
// teardown asks to stop: a process that ended before teardown keeps its own ending, one that
// survived SIGKILL is never recorded as stopped, and teardown run from inside the run never
// signals itself as the run's supervisor.

const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
  name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 500, startedAt: '2026-11-30T10:00:00.000Z', argv: [], env: {}, ports: { system: 8081 },
  gpuMemoryUtilization: 0.38, state: 'ready', kvTokens: 14816, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
});
const record = (processes: ProcessRecord[], supervisorPid = 50): RunRecord => ({
  id: 'r', recipe: 'agg', model: 'm', createdAt: '2026-11-30T10:00:00.000Z', updatedAt: '2026-11-30T10:00:00.000Z',
  supervisor: { pid: supervisorPid, startTicks: 40, detached: false }, state: 'ready', frontendUrl: 'http://127.0.0.1:8000', plan: {} as RunRecord['plan'], processes,
});
const states = (rec: RunRecord) => rec.processes.map((p) => [p.name, p.state, p.signal]);

describe('the record teardown writes back', () => {
  it('a process that exited on its own before teardown keeps "exited" and its exit code', () => {
    const rec = record([proc({ name: 'agg-0', state: 'exited', exitCode: 0 }), proc({ name: 'frontend' })]);
    const out = markStopped(rec, [{ name: 'frontend', pid: 100, signal: 'SIGTERM', ms: 12 }], true);
    expect(states(out)).toEqual([['agg-0', 'exited', null], ['frontend', 'stopped', 'SIGTERM']]);
    expect(out.processes[0].exitCode).toBe(0);
  });

  it('an ended process whose group teardown still had to signal is recorded stopped, with that signal', () => {
    const rec = record([proc({ name: 'agg-0', state: 'failed', exitCode: 1 })]);
    const out = markStopped(rec, [{ name: 'agg-0', pid: 100, signal: 'SIGKILL', ms: 310, note: 'leader had already exited; its group had not' }], true);
    expect(states(out)).toEqual([['agg-0', 'stopped', 'SIGKILL']]);
  });

  it('with survivors: a process that survived SIGKILL keeps its state, the others are stopped, the run keeps its state', () => {
    const rec = record([proc({ name: 'agg-0' }), proc({ name: 'agg-1', state: 'ready' })]);
    const out = markStopped(rec, [
      { name: 'agg-0', pid: 100, signal: 'SIGKILL', ms: 400, note: '1 process(es) survived SIGKILL: 101' },
      { name: 'agg-1', pid: 200, signal: 'SIGTERM', ms: 20 },
    ], false);
    expect(states(out)).toEqual([['agg-0', 'ready', null], ['agg-1', 'stopped', 'SIGTERM']]);
    expect(out.state).toBe('ready');
  });

  it('with survivors elsewhere, a process whose stop carries another note (not "survived") is recorded stopped', () => {
    const rec = record([proc({ name: 'agg-0' })]);
    const out = markStopped(rec, [{ name: 'agg-0', pid: 100, signal: 'SIGKILL', ms: 310, note: 'leader had already exited; its group had not' }], false);
    expect(states(out)).toEqual([['agg-0', 'stopped', 'SIGKILL']]);
  });

  it('when everything stopped, a "survived" note alone does not keep a process from being stopped', () => {
    const rec = record([proc({ name: 'agg-0' })]);
    const out = markStopped(rec, [{ name: 'agg-0', pid: 100, signal: 'SIGKILL', ms: 400, note: '1 process(es) survived SIGKILL: 101' }], true);
    expect(states(out)).toEqual([['agg-0', 'stopped', 'SIGKILL']]);
  });
});

describe('whom teardown asks to stop', () => {
  it('teardown running as the run\'s own supervisor (up stopping its run) never targets itself', () => {
    const view = { record: record([proc({ name: 'frontend', pid: 10, pgid: 10 })], process.pid) } as RunView;
    expect(runTargets(view, true).map((t) => t.name)).toEqual(['frontend']);
  });
});
