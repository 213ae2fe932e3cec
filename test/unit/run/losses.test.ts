import { describe, expect, it } from 'vitest';
import { describeEnd, lossKind, lostProcesses, noteGone } from '../../../src/run/losses.js';
import type { ProcessLiveness } from '../../../src/run/liveness.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

const proc = (name: string, o: Partial<ProcessRecord> = {}): ProcessRecord => ({
  name, role: name === 'frontend' ? 'frontend' : 'agg', pid: 100, pgid: 100, startTicks: 5, startedAt: '2026-11-30T10:00:00.000Z',
  argv: [], env: {}, ports: {}, gpuMemoryUtilization: 0.38, state: 'ready', kvTokens: 14816, exitCode: null, signal: null,
  log: `/s/${name}.log`, descendants: [], ...o,
});
const record = (processes: ProcessRecord[], state: RunRecord['state'] = 'ready'): RunRecord => ({
  id: 'r', recipe: 'agg-router', model: 'm', createdAt: '2026-11-30T10:00:00.000Z', updatedAt: '2026-11-30T10:00:05.000Z',
  supervisor: { pid: 50, startTicks: 1, detached: true }, state, frontendUrl: 'http://127.0.0.1:8000', plan: {} as RunRecord['plan'], processes,
});
const alive = (name: string, pids: number[] = [100]): ProcessLiveness => ({ name, alive: true, recycled: false, pids });
const dead = (name: string, pids: number[] = []): ProcessLiveness => ({ name, alive: false, recycled: false, pids });

describe('lostProcesses', () => {
  it('nothing lost while every planned process lives', () => {
    const rec = record([proc('frontend'), proc('agg-0'), proc('agg-1')]);
    expect(lostProcesses(rec, { perProcess: [alive('frontend'), alive('agg-0'), alive('agg-1')] })).toEqual([]);
  });

  it('a worker that died after ready: named, how (exit code), when, its diagnosis', () => {
    const diagnosis = { code: 'cuda.oom', title: 'CUDA out of memory', text: 'torch.OutOfMemoryError: CUDA out of memory.', file: '/s/agg-1.log', line: 12 };
    const rec = record([proc('frontend'), proc('agg-0'), proc('agg-1', { state: 'failed', exitCode: 1, endedAt: '2026-11-30T10:01:00.000Z', diagnosis })]);
    const lost = lostProcesses(rec, { perProcess: [alive('frontend'), alive('agg-0'), dead('agg-1')] });
    expect(lost).toEqual([{
      name: 'agg-1', role: 'agg', how: 'exited', exitCode: 1, signal: null, at: '2026-11-30T10:01:00.000Z', noticed: false, leftPids: [], diagnosis,
    }]);
    expect(describeEnd(lost[0])).toBe('exited with code 1');
  });

  it('a worker SIGKILLed with its engine left running: killed, and the engine\'s pid is what is left of it', () => {
    const rec = record([proc('frontend'), proc('agg-0'), proc('agg-1', { state: 'failed', signal: 'SIGKILL', endedAt: '2026-11-30T10:01:00.000Z' })]);
    const lost = lostProcesses(rec, { perProcess: [alive('frontend'), alive('agg-0'), dead('agg-1', [4242])] });
    expect(lost).toMatchObject([{ name: 'agg-1', how: 'killed', signal: 'SIGKILL', leftPids: [4242] }]);
    expect(describeEnd(lost[0])).toBe('was killed by SIGKILL');
  });

  it('a process that never started counts in a run that was ready, not in one still starting', () => {
    const ready = record([proc('frontend'), proc('agg-0', { pid: null, state: 'failed' })]);
    expect(lostProcesses(ready, { perProcess: [alive('frontend'), dead('agg-0')] }).map((x) => [x.name, x.how])).toEqual([['agg-0', 'never-started']]);
    const starting = record([proc('frontend'), proc('agg-0', { pid: null, state: 'waiting' })], 'starting');
    expect(lostProcesses(starting, { perProcess: [alive('frontend'), dead('agg-0')] })).toEqual([]);
  });

  it('lossKind: a signal says killed, an exit code exited, neither gone', () => {
    expect(lossKind({ pid: 1, exitCode: null, signal: 'SIGKILL' })).toBe('killed');
    expect(lossKind({ pid: 1, exitCode: 0, signal: null })).toBe('exited');
    expect(lossKind({ pid: 1, exitCode: null, signal: null })).toBe('gone');
    expect(lossKind({ pid: null, exitCode: null, signal: null })).toBe('never-started');
  });
});

describe('noteGone', () => {
  it('marks a process nobody reported gone, dated now, and the run degraded; once', () => {
    const rec = record([proc('frontend'), proc('agg-0'), proc('agg-1')]);
    const perProcess = [alive('frontend'), alive('agg-0'), dead('agg-1')];
    const now = new Date('2026-11-30T10:02:00.000Z');
    const noted = noteGone(rec, lostProcesses(rec, { perProcess }), now)!;
    expect(noted.state).toBe('degraded');
    expect(noted.processes[2]).toMatchObject({ state: 'gone', noticedGoneAt: '2026-11-30T10:02:00.000Z' });
    expect(noted.processes[1].state).toBe('ready');
    const lost = lostProcesses(noted, { perProcess });
    expect(lost).toMatchObject([{ name: 'agg-1', how: 'gone', at: '2026-11-30T10:02:00.000Z', noticed: true }]);
    expect(noteGone(noted, lost, new Date())).toBeNull();
  });

  it('records nothing for a process whose supervisor reported its end', () => {
    const rec = record([proc('agg-0', { state: 'failed', exitCode: 1, endedAt: '2026-11-30T10:01:00.000Z' })]);
    expect(noteGone(rec, lostProcesses(rec, { perProcess: [dead('agg-0')] }), new Date())).toBeNull();
  });
});
