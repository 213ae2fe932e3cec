import { describe, expect, it } from 'vitest';
import { buildRunStatus, pickRuns, withLeftoverMemory, type RunStatusDoc } from '../../../src/run/status-doc.js';
import type { RunLiveness } from '../../../src/run/liveness.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

// `status --json` on the cases the other status tests leave out: a run with nothing alive, a
// process without a start time or that started "in the future", unrecorded processes found by the
// marker, the GPU memory of what a lost process left, the default count of recent runs.

const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
  name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 500, startedAt: '2026-11-30T10:00:00.000Z', argv: [], env: {}, ports: { system: 8081 },
  gpuMemoryUtilization: 0.38, state: 'ready', kvTokens: 14816, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
});
const record = (processes: ProcessRecord[], o: Partial<RunRecord> = {}): RunRecord => ({
  id: 'r', recipe: 'agg', model: 'm', createdAt: '2026-11-30T10:00:00.000Z', updatedAt: '2026-11-30T10:00:01.000Z',
  supervisor: { pid: 50, startTicks: 40, detached: true }, state: 'ready', frontendUrl: 'http://f', plan: {} as RunRecord['plan'], processes, ...o,
});
const liveness = (o: Partial<RunLiveness>): RunLiveness => ({ supervisor: false, processes: false, perProcess: [], marked: [], pids: [], ownedPids: [], ...o });
const at = Date.parse('2026-11-30T10:05:00.000Z');

describe('the status document', () => {
  it('a run with nothing alive: not live, nothing lost (only a live run loses processes), the record\'s own fields', () => {
    const rec = record([proc({ state: 'stopped' })], { state: 'stopped' });
    const doc = buildRunStatus(rec, liveness({ perProcess: [{ name: 'agg-0', alive: false, recycled: false, pids: [] }] }), '/st', at);
    expect(doc).toMatchObject({
      id: 'r', recipe: 'agg', model: 'm', state: 'stopped', live: false, createdAt: '2026-11-30T10:00:00.000Z', updatedAt: '2026-11-30T10:00:01.000Z',
      frontendUrl: 'http://f', detached: true, supervisor: { pid: 50, alive: false }, lost: [], unrecorded: [], gpuChecked: false,
    });
  });

  it('live through its processes alone (the supervisor gone): live', () => {
    const doc = buildRunStatus(record([proc({})]), liveness({ processes: true, perProcess: [{ name: 'agg-0', alive: true, recycled: false, pids: [100] }] }), '/st', at);
    expect(doc.live).toBe(true);
    expect(doc.state).toBe('ready');
  });

  it('uptime: none without a start time, never negative when the clock is behind the record', () => {
    const alive = (pid: number) => ({ name: 'x', alive: true, recycled: false, pids: [pid] });
    const doc = buildRunStatus(
      record([proc({ startedAt: null }), proc({ name: 'agg-1', startedAt: '2026-11-30T10:06:00.000Z' })]),
      liveness({ processes: true, perProcess: [alive(100), alive(101)] }), '/st', at,
    );
    expect(doc.processes.map((p) => p.uptimeMs)).toEqual([null, 0]);
  });

  it('each process carries what status shows and what it ended with', () => {
    const diagnosis = { code: 'cuda.oom', title: 'CUDA out of memory', text: 't', file: '/x.log', line: 3 };
    const p = proc({ state: 'failed', exitCode: 1, signal: null, endedAt: '2026-11-30T10:03:00.000Z', diagnosis, ports: undefined as unknown as Record<string, number> });
    const doc = buildRunStatus(record([p], { state: 'failed' }), liveness({ perProcess: [{ name: 'agg-0', alive: false, recycled: false, pids: [] }] }), '/st', at);
    expect(doc.processes[0]).toEqual({
      name: 'agg-0', role: 'agg', pid: 100, alive: false, ready: false, state: 'failed', kvTokens: 14816, ports: {}, uptimeMs: null,
      startedAt: '2026-11-30T10:00:00.000Z', exitCode: 1, signal: null, log: '/x.log', pids: [], endedAt: '2026-11-30T10:03:00.000Z', noticedGoneAt: null, diagnosis, restarts: 0, restartHistory: [], restartsEnded: null, restartBackoff: null,
    });
  });

  it('processes only the marker found are listed with their command lines', () => {
    const doc = buildRunStatus(record([proc({})]), liveness({ processes: true, marked: [300, 301], perProcess: [{ name: 'agg-0', alive: true, recycled: false, pids: [100] }] }), '/st', at, (pid) => `cmd-${pid}`);
    expect(doc.unrecorded).toEqual([{ pid: 300, cmd: 'cmd-300' }, { pid: 301, cmd: 'cmd-301' }]);
  });
});

describe('the GPU memory of what lost processes left', () => {
  const doc = (leftPids: number[][]): RunStatusDoc => ({
    id: 'r', lost: leftPids.map((pids, i) => ({ name: `agg-${i}`, leftPids: pids, gpuMiB: null })), gpuChecked: false,
  }) as unknown as RunStatusDoc;

  it('summed over the listed pids of each lost process; null when none of them is listed; checked is said', () => {
    const [d] = withLeftoverMemory([doc([[10, 11, 12], [20], []])], new Map<number, number | null>([[10, 3000], [11, 1000], [20, null]]));
    expect(d.gpuChecked).toBe(true);
    expect(d.lost.map((x) => x.gpuMiB)).toEqual([4000, 0, null]);
  });

  it('a run whose lost processes left nothing is not marked as checked', () => {
    const [d] = withLeftoverMemory([doc([[], []])], new Map([[10, 3000]]));
    expect(d.gpuChecked).toBe(false);
    expect(d.lost.map((x) => x.gpuMiB)).toEqual([null, null]);
  });
});

describe('which runs status shows by default', () => {
  it('the 5 newest, plus any live run', () => {
    const docs = Array.from({ length: 8 }, (_, i) => ({ id: String(i), live: i === 7 }) as RunStatusDoc);
    expect(pickRuns(docs, {}).map((d) => d.id)).toEqual(['0', '1', '2', '3', '4', '7']);
    expect(pickRuns(docs, { recent: 2 }).map((d) => d.id)).toEqual(['0', '1', '7']);
  });
});
