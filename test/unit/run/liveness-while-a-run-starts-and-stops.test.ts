import { describe, expect, it } from 'vitest';
import { processPids, runLiveness } from '../../../src/run/liveness.js';
import { lostProcesses } from '../../../src/run/losses.js';
import { selectOrphans } from '../../../src/run/orphans.js';
import { classifyEngineCmd } from '../../../src/host/procs/engine-procs.js';
import type { ProcStat } from '../../../src/run/proc.js';
import type { ProcessInfo } from '../../../src/host/types.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

// The windows in which a run's record lags its processes, as sampled while `up agg-router` with the
// e2e fakes started and stopped (records read, then /proc scanned, as status and teardown look):
// - a spawn recorded a moment after the record was read: the new process is in no record; its run
//   marker names it (scanRuns), and before its exec it is a child of the live supervisor;
// - python3 is a pyenv shim: bash execs pyenv-exec, which forks short-lived subshells that show
//   "pyenv exec python3 -m dynamo.frontend ..." before it execs python at the recorded pid;
// - a wrapper that stays the parent (uv run, sh -c with a list): the program is its child, maybe in
//   a session of its own; at a stop the wrapper dies at the group's SIGTERM and the program shuts
//   down adopted by init.
// Each is pinned here on a fake scan: what status, teardown and doctor take for the run's.

const SUP = 50;
const st = (pid: number, ppid: number, pgid: number, startTicks: number): ProcStat => ({ pid, comm: 'x', state: 'S', ppid, pgid, session: pgid, startTicks });
const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
  name: 'frontend', role: 'frontend', pid: 100, pgid: 100, startTicks: 500, startedAt: null, argv: [], env: {}, ports: {},
  gpuMemoryUtilization: null, state: 'starting', kvTokens: null, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
});
const run = (processes: ProcessRecord[], state: RunRecord['state'] = 'starting') =>
  ({ id: 'r', state, supervisor: { pid: SUP, startTicks: 40, detached: false }, processes }) as unknown as RunRecord;
const supervisor = st(SUP, 10, 10, 40);
const info = (pid: number, ppid: number, pgid: number, cmd: string): ProcessInfo => ({
  pid, ppid, pgid, uid: 1000, user: 'u', cmd, name: cmd.split(' ')[0], startTicks: 600, ageMs: 1,
});

describe('a process spawned after the record was read', () => {
  const waiting = run([proc({ pid: null, pgid: null, startTicks: null, state: 'waiting' })]);
  const scan = [supervisor, st(100, SUP, 100, 500)];

  it('is the run\'s by its marker alone: owned and listed apart; the record could not know it', () => {
    expect(runLiveness(waiting, scan, [100])).toMatchObject({ supervisor: true, marked: [100], pids: [SUP, 100], ownedPids: [SUP, 100] });
    expect(runLiveness(waiting, scan).ownedPids).toEqual([SUP]);
  });

  it('is never called lost while the run starts (status shows it waiting, not gone)', () => {
    expect(lostProcesses(waiting, runLiveness(waiting, scan))).toEqual([]);
  });

  it('before its exec (no marker yet, still in the supervisor\'s group) it is under the live supervisor: never an orphan', () => {
    const procs = [info(SUP, 10, 10, 'node dynamo-dev up'), info(100, SUP, 10, 'python3 -m dynamo.frontend --http-port 8000')];
    const orphans = selectOrphans(procs, { uid: 1000, protectedPids: [], runPids: runLiveness(waiting, [supervisor]).ownedPids, classify: classifyEngineCmd });
    expect(orphans).toEqual([]);
    // The same process once its supervisor is gone is a leftover: the supervisor is what proves it.
    expect(selectOrphans(procs, { uid: 1000, protectedPids: [], runPids: [], classify: classifyEngineCmd }).map((p) => p.pid)).toEqual([100]);
  });
});

describe('python3 through a pyenv shim (bash execs into python at the recorded pid)', () => {
  it('a subshell of pyenv-exec (a child in the leader\'s group) is the process\'s own and the run\'s', () => {
    const rec = run([proc({})]);
    const scan = [supervisor, st(100, SUP, 100, 500), st(103, 100, 100, 503), st(104, 103, 100, 504)];
    expect(processPids(rec.processes[0], scan)).toEqual({ name: 'frontend', alive: true, recycled: false, pids: [100, 103, 104] });
    expect(runLiveness(rec, scan).ownedPids).toEqual([SUP, 100, 103, 104]);
  });
});

describe('a wrapper that stays the parent of the real program', () => {
  it('the program in a session of its own is the run\'s while the wrapper lives, recorded or not', () => {
    const rec = run([proc({})], 'ready');
    const scan = [supervisor, st(100, SUP, 100, 500), st(101, 100, 101, 501)];
    expect(runLiveness(rec, scan)).toMatchObject({ pids: [SUP, 100, 101], ownedPids: [SUP, 100, 101] });
    expect(lostProcesses(rec, runLiveness(rec, scan))).toEqual([]);
  });

  const adopted = { descendants: [{ pid: 101, startTicks: 501, cmd: 'python3 -m dynamo.frontend' }] };

  it('stopping under its live supervisor: the program the wrapper left at the group\'s SIGTERM is the run\'s, and nothing is lost', () => {
    const rec = run([proc({ state: 'stopped', signal: 'SIGTERM', ...adopted })], 'stopping');
    const scan = [supervisor, st(101, 1, 100, 501)];
    const l = runLiveness(rec, scan);
    // Not "a leftover, not part of the run" (status), nor a leftover for doctor: the stop follows it.
    expect(l).toMatchObject({ supervisor: true, processes: true, pids: [SUP, 101], ownedPids: [SUP, 101] });
    expect(lostProcesses(rec, l)).toEqual([]);
  });

  it('the supervisor died mid-stop: what is left is a lost process\'s leftover again (nobody stops it)', () => {
    const rec = run([proc({ state: 'stopped', signal: 'SIGTERM', ...adopted })], 'stopping');
    const l = runLiveness(rec, [st(101, 1, 100, 501)]);
    expect(l).toMatchObject({ supervisor: false, pids: [101], ownedPids: [] });
    expect(lostProcesses(rec, l)).toMatchObject([{ name: 'frontend', how: 'killed', leftPids: [101] }]);
  });

  it('a run that is not stopping (its wrapper died while it served): what is left is not its working part', () => {
    const rec = run([proc({ state: 'failed', exitCode: 1, ...adopted })], 'degraded');
    const l = runLiveness(rec, [supervisor, st(101, 1, 100, 501)]);
    expect(l).toMatchObject({ supervisor: true, pids: [SUP, 101], ownedPids: [SUP] });
    expect(lostProcesses(rec, l)).toMatchObject([{ name: 'frontend', how: 'exited', leftPids: [101] }]);
  });

  it('stopped before its child was recorded: only the marker names the program, and then it is the run\'s', () => {
    const rec = run([proc({ state: 'stopped' })], 'stopping');
    const scan = [supervisor, st(101, 1, 101, 501)];
    expect(runLiveness(rec, scan).pids).toEqual([SUP]);
    expect(runLiveness(rec, scan, [101])).toMatchObject({ marked: [101], pids: [SUP, 101], ownedPids: [SUP, 101] });
  });

  it('a leader whose start time was never read (it ended at once) proves nothing of its group: a stranger there is never the run\'s', () => {
    const rec = run([proc({ startTicks: null })], 'starting');
    expect(processPids(rec.processes[0], [st(101, 1, 100, 501)]).pids).toEqual([]);
  });
});
