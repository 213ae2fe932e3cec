import { describe, expect, it } from 'vitest';
import { creditSupervisor, supervisorMayHaveEnded } from '../../../src/run/teardown-credit.js';
import { ALREADY_GONE, type StopResult } from '../../../src/run/stop.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

// What teardown says of a process the run's supervisor may have stopped on its behalf.

const proc = (name: string, pid: number, stop?: ProcessRecord['stop']) => ({ name, pid, ...(stop === undefined ? {} : { stop }) }) as ProcessRecord;
const rec = (processes: ProcessRecord[], stopKillAt?: string) => ({ processes, ...(stopKillAt ? { stopKillAt } : {}) }) as RunRecord;
const gone = (name: string, pid: number): StopResult => ({ name, pid, signal: null, ms: 0, note: ALREADY_GONE });

describe('creditSupervisor', () => {
  it('found gone while the supervisor recorded a SIGTERM: SIGTERM by the supervisor, its time', () => {
    expect(creditSupervisor(gone('agg-0', 10), rec([proc('agg-0', 10, { signal: 'SIGTERM', ms: 42 })]), 7)).toEqual({
      name: 'agg-0', pid: 10, signal: 'SIGTERM', ms: 42, note: 'stopped by its supervisor (pid 7) for teardown', by: 'supervisor',
    });
  });
  it('found gone with nothing recorded (it ended before anyone asked), or no record: stays already gone', () => {
    expect(creditSupervisor(gone('agg-0', 10), rec([proc('agg-0', 10), proc('agg-1', 11, null)]), 7)).toEqual(gone('agg-0', 10));
    expect(creditSupervisor(gone('agg-1', 11), rec([proc('agg-1', 11, null)]), 7)).toEqual(gone('agg-1', 11));
    expect(creditSupervisor(gone('agg-0', 10), null, 7)).toEqual(gone('agg-0', 10));
  });
  it('the record of another process of that name (a restart gave it another pid) is not this one', () => {
    expect(creditSupervisor(gone('agg-0', 10), rec([proc('agg-0', 12, { signal: 'SIGTERM', ms: 5 })]), 7)).toEqual(gone('agg-0', 10));
  });
  it("ended on teardown's SIGTERM while the supervisor had sent SIGKILL: SIGKILL by the supervisor (it ignored SIGTERM)", () => {
    const r: StopResult = { name: 'agg-1', pid: 11, signal: 'SIGTERM', ms: 1100 };
    expect(creditSupervisor(r, rec([proc('agg-1', 11, { signal: 'SIGKILL', ms: 1050 })]), 7)).toEqual({
      ...r, signal: 'SIGKILL', note: 'SIGKILL from its supervisor (pid 7), whose grace ran out first', by: 'supervisor',
    });
    // Both sent SIGTERM: teardown's line stands.
    expect(creditSupervisor(r, rec([proc('agg-1', 11, { signal: 'SIGTERM', ms: 30 })]), 7)).toBe(r);
    // teardown's own SIGKILL stands.
    const k: StopResult = { ...r, signal: 'SIGKILL' };
    expect(creditSupervisor(k, rec([proc('agg-1', 11, { signal: 'SIGKILL', ms: 1050 })]), 7)).toBe(k);
  });
  it('a note other than already gone (recycled pid, another user) is never credited', () => {
    const r: StopResult = { name: 'agg-0', pid: 10, signal: null, ms: 0, note: 'pid 10 now belongs to another process (start time differs): recycled, not signalled' };
    expect(creditSupervisor(r, rec([proc('agg-0', 10, { signal: 'SIGTERM', ms: 3 })]), 7)).toBe(r);
  });
});

describe('supervisorMayHaveEnded: which lines wait for the supervisor', () => {
  const now = Date.parse('2026-12-05T00:00:10.000Z');
  const term: StopResult = { name: 'agg-0', pid: 10, signal: 'SIGTERM', ms: 80 };
  it('found gone: waits; gone for another reason: does not', () => {
    expect(supervisorMayHaveEnded(gone('agg-0', 10), null, now)).toBe(true);
    expect(supervisorMayHaveEnded({ ...gone('agg-0', 10), note: 'pid 10 belongs to another user: not signalled' }, null, now)).toBe(false);
  });
  it("ended on teardown's SIGTERM well before the supervisor's SIGKILL is due: said at once; at or after it (or not yet recorded): waits", () => {
    expect(supervisorMayHaveEnded(term, rec([], '2026-12-05T00:00:11.000Z'), now)).toBe(false);
    expect(supervisorMayHaveEnded(term, rec([], '2026-12-05T00:00:10.200Z'), now)).toBe(true);
    expect(supervisorMayHaveEnded(term, rec([], '2026-12-05T00:00:09.000Z'), now)).toBe(true);
    expect(supervisorMayHaveEnded(term, rec([]), now)).toBe(true);
    expect(supervisorMayHaveEnded(term, null, now)).toBe(true);
  });
  it("teardown's own SIGKILL: said at once", () => {
    expect(supervisorMayHaveEnded({ ...term, signal: 'SIGKILL' }, null, now)).toBe(false);
  });
});
