import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { teardown, type TeardownResult } from '../../../src/run/teardown.js';
import { readRun } from '../../../src/run/state.js';
import { markedProcesses, markerFor, RUN_MARKER } from '../../../src/run/run-scan.js';
import { readStopRequest } from '../../../src/run/stop-request.js';
import type { StopSnapshot } from '../../../src/run/stop.js';
import { tempHomes } from '../../helpers/cli.js';
import { deadPid, isAlive, killStarted, spawnLone, spawnTree, track, waitUntil, writeFakeRun } from '../../helpers/proc-trees.js';
import { readCmdline, readStartTicks } from '../../../src/run/proc.js';
import { listProcesses } from '../../../src/host/procs/processes.js';

// `teardown` as a function (src/run/teardown.ts) on real process trees and a real state directory:
// what it stops, what it tells as it goes, what it writes back, and what it says when the record
// cannot be written. (The e2e tests run the same through the built CLI.)

const home = tempHomes('dd-teardown-');
afterEach(() => killStarted());

const GRACE = 300;

/** A stand-in for a foreground `up` (its own group, as a shell starts it) once its SIGTERM trap is set. */
async function slowSupervisor(script: string, armed: string, env: Record<string, string>): Promise<{ pid: number; startTicks: number }> {
  const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore', env: { ...process.env, ...env } });
  track(child.pid!);
  child.unref();
  await waitUntil(() => existsSync(armed), 'the supervisor stand-in to set its trap');
  return { pid: child.pid!, startTicks: readStartTicks(child.pid!)! };
}

describe('teardown of recorded runs', () => {
  it('stops a live run\'s process group, tells each process as it is done, and records the run and its processes stopped', async () => {
    const { stateDir } = home();
    const id = '20261201-100000-000-agg';
    const tree = await spawnTree('honour', { [RUN_MARKER]: markerFor(stateDir, id) });
    await writeFakeRun(stateDir, {
      id, supervisor: { pid: deadPid(), startTicks: 1 },
      processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: tree.descendants }, { name: 'agg-1', pid: null, startTicks: null, state: 'waiting' }],
    });
    const plans: string[][] = [];
    const progress: TeardownResult[] = [];
    const states: [string, StopSnapshot][] = [];
    const out = await teardown({
      stateDir, graceMs: GRACE, orphans: false,
      onPlan: (p) => plans.push([...p.runs.map((v) => `live ${v.record.id}`), ...p.notRunning.map((v) => `not ${v.record.id}`)]),
      onProgress: (r) => progress.push(r),
      onState: (run, s) => states.push([run, s]),
    });
    expect(plans).toEqual([[`live ${id}`]]);
    expect(out).toMatchObject({ runs: [id], notRunning: [], orphans: 0, warnings: [], remaining: [] });
    expect(out.stopped).toEqual([{ run: id, name: 'agg-0', pid: tree.pid, signal: 'SIGTERM', ms: expect.any(Number) }]);
    expect(progress).toEqual(out.stopped);
    expect(states[0]).toEqual([id, expect.objectContaining({ targets: [expect.objectContaining({ name: 'agg-0', phase: 'terminating', signal: 'SIGTERM' })] })]);
    expect(isAlive(tree.pid)).toBe(false);
    expect(isAlive(tree.engine.pid)).toBe(false);
    const rec = await readRun(stateDir, id);
    expect(rec.state).toBe('stopped');
    expect(rec.processes.map((p) => [p.name, p.state, p.signal])).toEqual([['agg-0', 'stopped', 'SIGTERM'], ['agg-1', 'stopped', null]]);
    // No supervisor was alive: nobody to leave a note for.
    expect(readStopRequest(stateDir, id)).toBeNull();
  });

  it('--run of a run with nothing alive: said to be not running, nothing signalled, its record left as it was', async () => {
    const { stateDir } = home();
    const id = '20261201-100000-000-agg';
    const bystander = await spawnLone('not-part-of-any-run');
    await writeFakeRun(stateDir, { id, state: 'failed', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [{ name: 'agg-0', pid: deadPid(), startTicks: 1, state: 'failed' }] });
    const before = await readRun(stateDir, id);
    const plans: string[][] = [];
    const out = await teardown({ stateDir, runId: id, graceMs: GRACE, orphans: false, onPlan: (p) => plans.push(p.notRunning.map((v) => v.record.id)) });
    expect(plans).toEqual([[id]]);
    expect(out).toEqual({ stopped: [], remaining: [], runs: [], notRunning: [id], orphans: 0, warnings: [] });
    expect(await readRun(stateDir, id)).toEqual(before);
    expect(isAlive(bystander.pid)).toBe(true);
  });

  it('without --run only live runs are stopped; ended ones are neither stopped nor listed as not running', async () => {
    const { stateDir } = home();
    const liveId = '20261201-100000-000-agg';
    const endedId = '20261201-090000-000-agg';
    const tree = await spawnTree('honour', { [RUN_MARKER]: markerFor(stateDir, liveId) });
    await writeFakeRun(stateDir, { id: endedId, state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    await writeFakeRun(stateDir, { id: liveId, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: tree.descendants }] });
    const out = await teardown({ stateDir, graceMs: GRACE, orphans: false });
    expect(out.runs).toEqual([liveId]);
    expect(out.notRunning).toEqual([]);
    expect(out.stopped.map((r) => [r.run, r.name])).toEqual([[liveId, 'agg-0']]);
  });

  it('a live foreground supervisor is asked first (a note says who stopped the run) and gets longer than its processes to finish', async () => {
    const { stateDir, dir } = home();
    const id = '20261201-100000-000-agg';
    // A supervisor that needs 2.5x the processes' grace to finish its own stop after SIGTERM: it must
    // not be SIGKILLed at the processes' deadline.
    const armed = join(dir, 'sup-armed');
    const sup = await slowSupervisor(`trap 'sleep ${(GRACE * 2.5) / 1000}; exit 0' TERM; touch '${armed}'; while :; do sleep 0.05; done`, armed, { [RUN_MARKER]: markerFor(stateDir, id) });
    const tree = await spawnTree('honour', { [RUN_MARKER]: markerFor(stateDir, id) });
    await writeFakeRun(stateDir, { id, supervisor: { pid: sup.pid, startTicks: sup.startTicks }, processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: tree.descendants }] });
    const out = await teardown({ stateDir, graceMs: GRACE, orphans: false });
    expect(readStopRequest(stateDir, id)).toBe(`pid ${process.pid}`);
    const bySup = out.stopped.find((r) => r.name === 'supervisor')!;
    expect(bySup).toMatchObject({ run: id, pid: sup.pid, signal: 'SIGTERM' });
    expect(bySup.ms).toBeGreaterThanOrEqual(GRACE * 2.5 - 50);
    expect(out.stopped.find((r) => r.name === 'agg-0')).toMatchObject({ signal: 'SIGTERM' });
    expect(out.remaining).toEqual([]);
    expect(isAlive(sup.pid)).toBe(false);
  });

  it('a process that double-forked out of the run but carries its marker is found and stopped, and the result says how it was found', async () => {
    const { stateDir } = home();
    const id = '20261201-100000-000-agg';
    const tree = await spawnTree('double-fork', { [RUN_MARKER]: markerFor(stateDir, id) });
    await writeFakeRun(stateDir, { id, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: [tree.engine] }] });
    // Both escapees have exec'd (their names are what the result shows).
    for (let i = 0; i < 500; i++) {
      const marked = await markedProcesses(markerFor(stateDir, id), 0);
      for (const p of marked) track(p.pid); // killed after the test even if teardown fails to
      const names = marked.map((p) => readCmdline(p.pid));
      if (names.some((n) => n.startsWith('VLLM::Worker')) && names.some((n) => n.startsWith('helper-daemon'))) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const out = await teardown({ stateDir, graceMs: GRACE, orphans: false });
    const marked = out.stopped.filter((r) => r.note === 'found by its run marker');
    expect(marked.map((r) => r.name).sort()).toEqual(['VLLM::Worker', 'helper-daemon'].sort());
    expect(marked.every((r) => r.signal === 'SIGTERM' && r.run === id)).toBe(true);
    expect(out.remaining).toEqual([]);
    for (const r of out.stopped) expect(isAlive(r.pid)).toBe(false);
    expect((await readRun(stateDir, id)).state).toBe('stopped');
  });

  it('a record that cannot be written back: the processes are stopped all the same and a warning says the status may be stale', async () => {
    const { stateDir } = home();
    const id = '20261201-100000-000-agg';
    const tree = await spawnTree('honour', { [RUN_MARKER]: markerFor(stateDir, id) });
    await writeFakeRun(stateDir, { id, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: tree.descendants }] });
    const json = join(stateDir, 'runs', id, 'run.json');
    const out = await teardown({
      stateDir, graceMs: GRACE, orphans: false,
      // After the targets are read, the record's place turns into a folder nothing can be renamed over.
      onPlan: () => {
        rmSync(json);
        mkdirSync(join(json, 'in-the-way'), { recursive: true });
      },
    });
    expect(out.stopped.map((r) => [r.name, r.signal])).toEqual([['agg-0', 'SIGTERM']]);
    expect(isAlive(tree.pid)).toBe(false);
    expect(out.warnings).toHaveLength(1);
    expect(out.warnings[0]).toMatch(new RegExp(`^run ${id}: the record could not be updated \\((EISDIR|ENOTEMPTY|EEXIST)\\); status may not show the run as stopped$`));
    expect(existsSync(join(json, 'in-the-way'))).toBe(true);
  });
});

describe('teardown --orphans (the process list limited to this test\'s own processes)', () => {
  /** The real process list, but only these pids: other suites on this machine run engine fakes too. */
  const only = (...pids: number[]) => async () => (await listProcesses()).filter((p) => pids.includes(p.pid));

  it('a leftover engine of ours is stopped alone (never by group), reported without a run, and counted', async () => {
    const { stateDir } = home();
    const engine = await spawnLone('VLLM::EngineCore');
    const progress: TeardownResult[] = [];
    const out = await teardown({ stateDir, graceMs: GRACE, orphans: true, listProcesses: only(engine.pid), onProgress: (r) => progress.push(r) });
    expect(out.orphans).toBe(1);
    expect(out.stopped).toEqual([{ run: null, name: 'VLLM::EngineCore', pid: engine.pid, signal: 'SIGTERM', ms: expect.any(Number) }]);
    expect(progress).toEqual(out.stopped);
    expect(out.remaining).toEqual([]);
    expect(isAlive(engine.pid)).toBe(false);
  });

  it('a process that is no engine, or an engine of a live run, is left alone; without --orphans nothing is listed', async () => {
    const { stateDir } = home();
    const id = '20261201-100000-000-agg';
    const other = await spawnLone('not-an-engine');
    const tree = await spawnTree('ignore', { [RUN_MARKER]: markerFor(stateDir, id) });
    await writeFakeRun(stateDir, { id, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: tree.descendants }] });
    // --run of an ended run leaves the live one running: its engine is a live run's, not an orphan.
    await writeFakeRun(stateDir, { id: '20261201-090000-000-agg', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    const out = await teardown({ stateDir, runId: '20261201-090000-000-agg', graceMs: GRACE, orphans: true, listProcesses: only(other.pid, tree.engine.pid) });
    expect(out.orphans).toBe(0);
    expect(out.stopped).toEqual([]);
    expect(isAlive(other.pid)).toBe(true);
    expect(isAlive(tree.engine.pid)).toBe(true);
    let listed = false;
    await teardown({ stateDir, runId: '20261201-090000-000-agg', graceMs: GRACE, orphans: false, listProcesses: async () => ((listed = true), []) });
    expect(listed).toBe(false);
  });
});
