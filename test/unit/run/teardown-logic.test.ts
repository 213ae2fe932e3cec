import { afterEach, describe, expect, it } from 'vitest';
import { markStopped, runTargets } from '../../../src/run/teardown.js';
import { stopTargets } from '../../../src/run/stop.js';
import { buildRunStatus, pickRuns, type RunStatusDoc } from '../../../src/run/status-doc.js';
import { formatDuration } from '../../../src/ui/status-table.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';
import { deadPid, isAlive, killStarted, spawnLone } from '../../helpers/proc-trees.js';

afterEach(() => killStarted());

const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
  name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 500, startedAt: '2026-11-30T10:00:00.000Z', argv: [], env: {}, ports: { system: 8081 },
  gpuMemoryUtilization: 0.38, state: 'ready', kvTokens: 14816, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
});
const record = (processes: ProcessRecord[], state: RunRecord['state'] = 'ready'): RunRecord => ({
  id: 'r', recipe: 'agg', model: 'm', createdAt: '2026-11-30T10:00:00.000Z', updatedAt: '2026-11-30T10:00:00.000Z',
  supervisor: { pid: 50, startTicks: 40, detached: false }, state, frontendUrl: 'http://127.0.0.1:8000', plan: {} as RunRecord['plan'], processes,
});

describe('runTargets', () => {
  it('each started process by its group; the live supervisor alone (never its group); unstarted ones skipped', () => {
    const view = { record: record([proc({ name: 'frontend', pid: 10, pgid: 10 }), proc({ name: 'agg-0', pid: null, pgid: null, startTicks: null })]) } as RunView;
    expect(runTargets(view, true)).toEqual([
      { name: 'supervisor', pid: 50, pgid: 50, startTicks: 40, single: true },
      { name: 'frontend', pid: 10, pgid: 10, startTicks: 500, descendants: [] },
    ]);
    expect(runTargets(view, false).map((t) => t.name)).toEqual(['frontend']);
  });
});

describe('markStopped', () => {
  it('stopped processes and run are marked stopped; exited/failed ones keep their state; a waiting one is stopped too', () => {
    const rec = record([proc({ name: 'frontend' }), proc({ name: 'agg-0', state: 'failed', exitCode: 1 }), proc({ name: 'agg-1', pid: null, state: 'waiting' })]);
    const out = markStopped(rec, [
      { name: 'frontend', pid: 100, signal: 'SIGTERM', ms: 20 },
      { name: 'agg-0', pid: 100, signal: null, ms: 0, note: 'already gone' },
    ], true, new Date('2026-11-30T11:00:00Z'));
    expect(out.state).toBe('stopped');
    expect(out.updatedAt).toBe('2026-11-30T11:00:00.000Z');
    expect(out.processes.map((p) => [p.name, p.state, p.signal])).toEqual([['frontend', 'stopped', 'SIGTERM'], ['agg-0', 'failed', null], ['agg-1', 'stopped', null]]);
  });
  it('a process found gone keeps saying so (how it ended is unknown, not "stopped by teardown")', () => {
    const rec = record([proc({ name: 'agg-1', state: 'gone', noticedGoneAt: '2026-11-30T10:59:00.000Z' })], 'degraded');
    const out = markStopped(rec, [{ name: 'agg-1', pid: 100, signal: null, ms: 0, note: 'already gone' }], true);
    expect(out.processes[0]).toMatchObject({ state: 'gone', signal: null });
    expect(out.state).toBe('stopped');
  });
  it('a failed run stays failed; with survivors the run state is left alone', () => {
    expect(markStopped(record([], 'failed'), [], true).state).toBe('failed');
    expect(markStopped(record([], 'ready'), [], false).state).toBe('ready');
  });
});

describe('stopTargets edge cases', () => {
  it('a target that is already gone is reported without a signal', async () => {
    const pid = deadPid();
    const r = await stopTargets([{ name: 'agg-0', pid, pgid: pid, startTicks: 123 }], { graceMs: 1000 });
    expect(r).toEqual({ stopped: [{ name: 'agg-0', pid, signal: null, ms: 0, note: 'already gone' }], remaining: [] });
  });
  it('a live pid without recorded start time is never signalled', async () => {
    const lone = await spawnLone('no-ticks-recorded');
    const r = await stopTargets([{ name: 'agg-0', pid: lone.pid, pgid: lone.pid, startTicks: null }], { graceMs: 100 });
    expect(r.stopped[0]).toMatchObject({ signal: null, note: expect.stringMatching(/start time was never recorded/) });
    expect(isAlive(lone.pid)).toBe(true);
  });
  it('never signals our own process group, whatever the record says', async () => {
    const own = process.pid;
    const r = await stopTargets([{ name: 'x', pid: 2 ** 22 + 3, pgid: (await import('../../../src/run/proc.js')).readStat(own)!.pgid, startTicks: 1 }], { graceMs: 50 });
    expect(r.stopped[0].signal).toBeNull();
    expect(isAlive(own)).toBe(true);
  });
});

describe('status document', () => {
  it('per process: alive, ready only when alive and ready, uptime only when alive', () => {
    const rec = record([proc({ name: 'frontend' }), proc({ name: 'agg-0', state: 'ready' })]);
    const doc = buildRunStatus(rec, {
      supervisor: true, processes: true, marked: [], pids: [50, 100], ownedPids: [50, 100],
      perProcess: [{ name: 'frontend', alive: true, recycled: false, pids: [100] }, { name: 'agg-0', alive: false, recycled: false, pids: [] }],
    }, '/state', Date.parse('2026-11-30T10:05:00Z'));
    // agg-0 is gone from a run that was ready: the run is degraded, never ready.
    expect(doc).toMatchObject({ id: 'r', state: 'degraded', live: true, logsDir: '/state/runs/r/logs', supervisor: { pid: 50, alive: true } });
    expect(doc.lost.map((x) => x.name)).toEqual(['agg-0']);
    expect(doc.processes[0]).toMatchObject({ alive: true, ready: true, uptimeMs: 300000, kvTokens: 14816, ports: { system: 8081 } });
    expect(doc.processes[1]).toMatchObject({ alive: false, ready: false, uptimeMs: null });
  });
  it('pickRuns: live runs always, others only among the 5 newest', () => {
    const d = (id: string, live: boolean) => ({ id, live }) as RunStatusDoc;
    const docs = [d('7', false), d('6', false), d('5', false), d('4', false), d('3', false), d('2', false), d('1', true)];
    expect(pickRuns(docs, {}).map((x) => x.id)).toEqual(['7', '6', '5', '4', '3', '1']);
    expect(pickRuns(docs, { all: true })).toHaveLength(7);
  });
  it('formatDuration', () => {
    expect([3000, 302000, 7500000, 3 * 86400000 + 4 * 3600000, null].map(formatDuration)).toEqual(['3s', '5m02s', '2h05m', '3d04h', '-']);
  });
});
