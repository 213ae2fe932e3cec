import { describe, expect, it } from 'vitest';
import { ownRunView } from '../../../src/doctor/prepare.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { RunRecord } from '../../../src/run/types.js';

const view = (live: boolean, pids: number[]): RunView => ({
  record: { id: '20261130-101500-agg', processes: [] } as unknown as RunRecord,
  status: live ? 'ready' : 'stopped', live, pids, logsDir: '/x',
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
