import { describe, expect, it } from 'vitest';
import { chooseLogRun, ownRunView, RECENT_MS } from '../../../src/doctor/prepare.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { RunRecord } from '../../../src/run/types.js';

const view = (live: boolean, pids: number[]): RunView => ({
  record: { id: '20261130-101500-agg', processes: [] } as unknown as RunRecord,
  status: live ? 'ready' : 'stopped', live, pids, lost: [], logsDir: '/x',
});

describe('ownRunView', () => {
  it('keeps a live run whose processes run as us (gone pids do not matter)', () => {
    const v = view(true, [500, 501, 502]);
    expect(ownRunView(v, new Map([[500, 1000], [501, 1000]]), 1000)).toBe(v);
  });

  it("does not take another user's live run in a shared state directory for ours", () => {
    // Their engines, ports and GPU memory must not pass as "the live run".
    const r = ownRunView(view(true, [500, 501]), new Map([[500, 1001], [501, 1001]]), 1000);
    expect(r?.live).toBe(false);
    expect(r?.pids).toEqual([]);
    expect(r?.record.id).toBe('20261130-101500-agg');
  });

  it('leaves no run, a stopped run, or an unknown own uid as they are', () => {
    expect(ownRunView(null, new Map(), 1000)).toBeNull();
    const stopped = view(false, []);
    expect(ownRunView(stopped, new Map(), 1000)).toBe(stopped);
    const v = view(true, [500]);
    expect(ownRunView(v, new Map([[500, 1001]]), null)).toBe(v);
  });
});

describe('chooseLogRun: whose logs the log checks judge', () => {
  const now = Date.parse('2026-11-30T12:00:00.000Z');
  const run = (id: string, recipe: string, status: RunView['status'], live: boolean, endedMsAgo = 0): RunView => ({
    record: { id, recipe, processes: [], updatedAt: new Date(now - endedMsAgo).toISOString() } as unknown as RunRecord,
    status, live, pids: [], lost: [], logsDir: `/s/runs/${id}/logs`,
  });

  it('the live run', () => {
    const live = run('r2', 'agg-router', 'ready', true);
    expect(chooseLogRun({ runs: { live, byId: null, latest: live }, now })).toEqual({ run: live, none: null });
  });

  it('--run: that run, live or not', () => {
    const old = run('r1', 'agg', 'failed', false, 3 * 3_600_000);
    expect(chooseLogRun({ runs: { live: null, byId: old, latest: old }, runId: 'r1', now }).run).toBe(old);
  });

  it('--recipe of another recipe than the live run\'s: no logs judged, and it says why', () => {
    const live = run('r2', 'agg-router', 'ready', true);
    const r = chooseLogRun({ runs: { live, byId: null, latest: live }, recipeName: 'disagg-same-gpu', now });
    expect(r.run).toBeNull();
    expect(r.none).toMatchObject({ status: 'skip' });
    expect(r.none!.summary).toBe('the live run r2 runs agg-router, not disagg-same-gpu: its logs are not judged against disagg-same-gpu');
    expect(chooseLogRun({ runs: { live, byId: null, latest: live }, recipeName: 'agg-router', now }).run).toBe(live);
  });

  it('no live run: an old run is never judged; a run stopped by the user is named in the skip', () => {
    const stopped = run('r1', 'agg', 'stopped', false, 60_000);
    const r = chooseLogRun({ runs: { live: null, byId: null, latest: stopped }, now });
    expect(r.run).toBeNull();
    expect(r.none!.status).toBe('skip');
    expect(r.none!.summary).toContain('the latest run r1 stopped 1 min ago: `dynamo-dev doctor --run r1` judges it');
  });

  it('no live run and the latest failed within the last minutes: a warning naming it and its age; not once it is older', () => {
    const failed = run('r1', 'agg', 'failed', false, RECENT_MS);
    const r = chooseLogRun({ runs: { live: null, byId: null, latest: failed }, now });
    expect(r.none).toMatchObject({ status: 'warn', summary: 'no live run; the latest run r1 (agg) failed 10 min ago: its logs are not judged here' });
    expect(r.none!.fix).toContain('dynamo-dev doctor --run r1');
    const older = run('r1', 'agg', 'failed', false, RECENT_MS + 1000);
    expect(chooseLogRun({ runs: { live: null, byId: null, latest: older }, now }).none!.status).toBe('skip');
  });

  it('no run at all', () => {
    expect(chooseLogRun({ runs: { live: null, byId: null, latest: null }, now }).none!.summary).toMatch(/^no live run: no logs to judge/);
  });
});
