import { describe, expect, it } from 'vitest';
import { processPids, runLiveness } from '../../../src/run/liveness.js';
import type { ProcStat } from '../../../src/run/proc.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

const st = (pid: number, ppid: number, pgid: number, startTicks: number): ProcStat => ({ pid, comm: 'x', state: 'S', ppid, pgid, session: 1, startTicks });
const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
  name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 500, startedAt: null, argv: [], env: {}, ports: {},
  gpuMemoryUtilization: 0.38, state: 'ready', kvTokens: null, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
});

describe('processPids', () => {
  it('leader alive and the same: leader, its group and its descendants', () => {
    const scan = [st(100, 1, 100, 500), st(101, 100, 100, 510), st(102, 101, 102, 520)];
    expect(processPids(proc({}), scan)).toEqual({ name: 'agg-0', alive: true, recycled: false, pids: [100, 101, 102] });
  });

  it('leader exited first: its group still counts while a recorded descendant lives in it (its engine lives on)', () => {
    const scan = [st(101, 1, 100, 510), st(105, 101, 100, 520)];
    const p = proc({ descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] });
    expect(processPids(p, scan)).toMatchObject({ alive: false, recycled: false, pids: [101, 105] });
  });

  it('leader gone and nothing recorded in its group: the group is not ours (a stranger may have reused the pgid)', () => {
    // pid 100 is now someone else (start ticks 900) leading group 100: recycled; and with the leader simply gone:
    expect(processPids(proc({}), [st(100, 1, 100, 900), st(101, 100, 100, 910)]).pids).toEqual([]);
    expect(processPids(proc({}), [st(101, 1, 100, 910)]).pids).toEqual([]);
  });

  it('pid or pgid 0 and 1 are never a run\'s (kernel threads have pgid 0)', () => {
    const kthreads = [st(2, 0, 0, 1), st(3, 2, 0, 1)];
    expect(processPids(proc({ pid: 0, pgid: 0, startTicks: 0 }), kthreads).pids).toEqual([]);
    expect(processPids(proc({ pid: 1, pgid: 1, startTicks: 1 }), [st(1, 0, 1, 1), ...kthreads]).pids).toEqual([]);
  });

  it('marked pids (the run marker, in no record) are counted and listed apart', () => {
    const rec = { supervisor: { pid: 50, startTicks: 40, detached: false }, processes: [proc({})] } as unknown as RunRecord;
    const l = runLiveness(rec, [st(100, 1, 100, 500), st(700, 1, 700, 800)], [700, 100, 999]);
    expect(l).toMatchObject({ supervisor: false, processes: true, marked: [700], pids: [100, 700] });
  });

  it('group members older than the recorded leader are not ours (a reused pgid)', () => {
    const scan = [st(101, 1, 100, 400)];
    expect(processPids(proc({}), scan).pids).toEqual([]);
  });

  it('pid recycled (alive, other start time): neither it nor its group; recorded descendants still checked by start time', () => {
    const scan = [st(100, 1, 100, 999), st(101, 100, 100, 1000), st(300, 1, 300, 600)];
    const p = proc({ descendants: [{ pid: 300, startTicks: 600, cmd: 'VLLM::EngineCore' }, { pid: 101, startTicks: 7, cmd: 'VLLM::EngineCore' }] });
    expect(processPids(p, scan)).toEqual({ name: 'agg-0', alive: false, recycled: true, pids: [300] });
  });

  it('never started (pid null): nothing', () => {
    expect(processPids(proc({ pid: null, pgid: null, startTicks: null }), [st(100, 1, 100, 500)]).pids).toEqual([]);
  });
});

describe('runLiveness', () => {
  it('supervisor counted only when it is the same process; pids include it', () => {
    const rec = { supervisor: { pid: 50, startTicks: 40, detached: false }, processes: [proc({})] } as unknown as RunRecord;
    const l = runLiveness(rec, [st(50, 1, 50, 40), st(100, 50, 100, 500)]);
    expect(l).toMatchObject({ supervisor: true, processes: true, pids: [50, 100] });
    const reused = runLiveness(rec, [st(50, 1, 50, 41)]);
    expect(reused).toMatchObject({ supervisor: false, processes: false, pids: [] });
  });
});
