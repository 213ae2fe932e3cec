import { describe, expect, it } from 'vitest';
import { describeEnd, lossKind, lostProcesses, noteGone } from '../../../src/run/losses.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

// How status and diagnose word what a live run lost, on the cases the other losses tests leave out:
// a run already degraded, a run still starting, a process whose end was both seen and noticed.

const proc = (name: string, o: Partial<ProcessRecord> = {}): ProcessRecord => ({
  name, role: 'agg', pid: 100, pgid: 100, startTicks: 5, startedAt: null, argv: [], env: {}, ports: {}, gpuMemoryUtilization: 0.38,
  state: 'ready', kvTokens: null, exitCode: null, signal: null, log: `/s/${name}.log`, descendants: [], ...o,
});
const record = (processes: ProcessRecord[], state: RunRecord['state']): RunRecord => ({ id: 'r', state, processes, updatedAt: 'before' } as unknown as RunRecord);
const dead = (name: string) => ({ name, alive: false, recycled: false, pids: [] });

describe('words for how a process ended', () => {
  it('each kind in words', () => {
    expect(describeEnd({ how: 'never-started', exitCode: null, signal: null })).toBe('never started');
    expect(describeEnd({ how: 'gone', exitCode: null, signal: null })).toBe('is gone (exit unknown)');
    expect(describeEnd({ how: 'exited', exitCode: 0, signal: null })).toBe('exited with code 0');
  });
  it('an exit code the record lacks altogether is "gone", not "exited"', () => {
    expect(lossKind({ pid: 1, exitCode: undefined as unknown as null, signal: null })).toBe('gone');
  });
});

describe('what a run lost', () => {
  it('a degraded run counts a process that never started, as a ready one does', () => {
    const rec = record([proc('agg-0', { pid: null, state: 'failed' })], 'degraded');
    expect(lostProcesses(rec, { perProcess: [dead('agg-0')] }).map((x) => x.how)).toEqual(['never-started']);
  });

  it('the time it ended wins over the time it was noticed, and then it is not "noticed"', () => {
    const rec = record([proc('agg-0', { exitCode: 1, endedAt: '2026-11-30T10:01:00.000Z', noticedGoneAt: '2026-11-30T10:05:00.000Z' })], 'ready');
    expect(lostProcesses(rec, { perProcess: [dead('agg-0')] })[0]).toMatchObject({ at: '2026-11-30T10:01:00.000Z', noticed: false });
  });

  it('a record with more processes than were judged: the unjudged ones count as lost, with nothing left of them', () => {
    const rec = record([proc('agg-0'), proc('agg-1')], 'ready');
    expect(lostProcesses(rec, { perProcess: [{ name: 'agg-0', alive: true, recycled: false, pids: [100] }] })).toMatchObject([{ name: 'agg-1', leftPids: [], diagnosis: null, at: null, noticed: false }]);
  });
});

describe('noting a process gone', () => {
  it('a run still starting keeps its state; the record is stamped with the time it was noticed', () => {
    const rec = record([proc('agg-0')], 'starting');
    const now = new Date('2026-11-30T10:02:00.000Z');
    const noted = noteGone(rec, lostProcesses(record([proc('agg-0')], 'ready'), { perProcess: [dead('agg-0')] }), now)!;
    expect(noted.state).toBe('starting');
    expect(noted.updatedAt).toBe('2026-11-30T10:02:00.000Z');
  });

  it('only processes gone without a word are noted; exited or killed ones keep what their supervisor recorded', () => {
    const rec = record([proc('agg-0', { exitCode: 1, state: 'failed' }), proc('agg-1', { signal: 'SIGKILL', state: 'failed' }), proc('agg-2')], 'ready');
    const noted = noteGone(rec, lostProcesses(rec, { perProcess: [dead('agg-0'), dead('agg-1'), dead('agg-2')] }), new Date('2026-11-30T10:02:00.000Z'))!;
    expect(noted.processes.map((p) => p.state)).toEqual(['failed', 'failed', 'gone']);
    expect(noted.processes[0]).not.toHaveProperty('noticedGoneAt');
  });
});
