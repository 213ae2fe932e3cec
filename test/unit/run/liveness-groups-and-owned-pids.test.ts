import { describe, expect, it } from 'vitest';
import { indexScan, processPids, runLiveness, sameIn } from '../../../src/run/liveness.js';
import type { ProcStat } from '../../../src/run/proc.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

// What status and teardown take for a run's processes when the groups are not the simple case: a
// leader that left its group, a descendant in another group, members started in the same tick as
// the leader, a record without a supervisor or start ticks, the supervisor carrying the marker.

const st = (pid: number, ppid: number, pgid: number, startTicks: number): ProcStat => ({ pid, comm: 'x', state: 'S', ppid, pgid, session: 1, startTicks });
const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
  name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 500, startedAt: null, argv: [], env: {}, ports: {},
  gpuMemoryUtilization: 0.38, state: 'ready', kvTokens: null, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
});
const run = (processes: ProcessRecord[], supervisor: RunRecord['supervisor'] | 'none' = { pid: 50, startTicks: 40, detached: false }) =>
  (supervisor === 'none' ? { id: 'r', processes } : { id: 'r', supervisor, processes }) as unknown as RunRecord;

describe('which pids are a process\'s', () => {
  it('a process recorded in a group it does not lead counts that group\'s members', () => {
    const scan = [st(90, 1, 90, 450), st(100, 90, 90, 500), st(91, 1, 90, 520)];
    expect(processPids(proc({ pgid: 90 }), scan).pids).toEqual([90, 91, 100]);
  });

  it('a leader that moved to another group: strangers older than it in its recorded group are not the run\'s', () => {
    const scan = [st(100, 1, 200, 500), st(101, 1, 100, 400)];
    expect(processPids(proc({}), scan)).toEqual({ name: 'agg-0', alive: true, recycled: false, pids: [100] });
  });

  it('a live recorded descendant in another group proves nothing about the recorded group', () => {
    const scan = [st(300, 1, 300, 600), st(101, 1, 100, 700)];
    const p = proc({ descendants: [{ pid: 300, startTicks: 600, cmd: 'VLLM::EngineCore' }] });
    expect(processPids(p, scan).pids).toEqual([300]);
  });

  it('leader gone, group proven by a descendant: members started in the leader\'s tick are ours, older ones are not', () => {
    const scan = [st(101, 1, 100, 510), st(102, 1, 100, 500), st(103, 1, 100, 499)];
    const p = proc({ descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] });
    expect(processPids(p, scan).pids).toEqual([101, 102]);
  });

  it('pids come sorted whatever order they were found in (a recorded descendant before its leader)', () => {
    const scan = [st(100, 1, 100, 500), st(30, 1, 30, 600), st(20, 100, 100, 700)];
    const p = proc({ descendants: [{ pid: 30, startTicks: 600, cmd: 'VLLM::EngineCore' }] });
    expect(processPids(p, scan).pids).toEqual([20, 30, 100]);
  });
});

describe('what of a run is alive', () => {
  it('a record without start ticks (hand-edited or old) never makes a pid that is gone alive', () => {
    expect(sameIn(indexScan([]), 50, undefined as unknown as null)).toBe(false);
    const rec = run([], { pid: 50, startTicks: undefined, detached: false } as unknown as RunRecord['supervisor']);
    expect(runLiveness(rec, [st(100, 1, 100, 500)])).toMatchObject({ supervisor: false, pids: [] });
  });

  it('a record without a supervisor: judged by its processes alone', () => {
    const l = runLiveness(run([proc({})], 'none'), [st(100, 1, 100, 500), st(700, 1, 700, 800)], [700]);
    expect(l).toMatchObject({ supervisor: false, processes: true, marked: [700], pids: [100, 700] });
  });

  it('the supervisor carrying the run\'s marker is the supervisor, not an unrecorded process', () => {
    const l = runLiveness(run([proc({})]), [st(50, 1, 50, 40), st(100, 50, 100, 500)], [50, 100]);
    expect(l).toMatchObject({ supervisor: true, marked: [], pids: [50, 100], ownedPids: [50, 100] });
  });

  it('what is left of a process whose leader died is alive but not owned (doctor counts it as a leftover)', () => {
    const p = proc({ descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] });
    const l = runLiveness(run([p, proc({ name: 'frontend', pid: 200, pgid: 200, startTicks: 600 })]), [st(50, 1, 50, 40), st(101, 1, 100, 510), st(200, 50, 200, 600)]);
    expect(l).toMatchObject({ processes: true, pids: [50, 101, 200], ownedPids: [50, 200] });
  });

  it('one scan is indexed once (status judges every run it shows against the same scan)', () => {
    const scan = [st(100, 1, 100, 500)];
    expect(indexScan(scan)).toBe(indexScan(scan));
  });
});
