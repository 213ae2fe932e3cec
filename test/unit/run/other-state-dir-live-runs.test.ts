import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { foreignRunOf, judgeOtherRun, otherLiveRuns, stopCommandFor } from '../../../src/run/other-runs.js';
import type { RunLiveness } from '../../../src/run/liveness.js';
import { readBootId, realMarkerReader, RUN_MARKER } from '../../../src/run/run-scan.js';
import { writeRun } from '../../../src/run/state.js';
import { teardown } from '../../../src/run/teardown.js';
import { listProcesses } from '../../../src/host/procs/processes.js';
import type { RunRecord } from '../../../src/run/types.js';
import { tempHomes } from '../../helpers/cli.js';
import { isAlive, killStarted, spawnLone, spawnTree, waitUntil, writeFakeRun } from '../../helpers/proc-trees.js';

// A run started with another state dir (DYNAMO_DEV_HOME=/x up in a second terminal) is someone's
// live experiment: its processes carry its run dir in their environment, and only a record that
// proves that run live now (readable, this boot, supervisor alive, the process its own) keeps
// them from being leftovers here. Anything less: a leftover, as before.

const home = tempHomes('dd-other-home-');
afterEach(() => killStarted());

const rec = (o: Partial<RunRecord> = {}): RunRecord => ({ id: 'r1', bootId: 'boot-a', processes: [], ...o } as unknown as RunRecord);
const live = (o: Partial<RunLiveness> = {}): RunLiveness => ({
  supervisor: true, processes: true, perProcess: [], marked: [], pids: [10, 20, 30], ownedPids: [10, 20], ...o,
});

describe('foreignRunOf: the run a marker names, when it is another state dir\'s', () => {
  it('a run dir of another state dir is named with its state dir and id', () => {
    expect(foreignRunOf('/home/a/state/runs/20261201-1-agg', '/home/b/state')).toEqual({ stateDir: '/home/a/state', id: '20261201-1-agg' });
  });

  it('a run dir of this state dir is not foreign (its own records judge it); no marker, no run', () => {
    expect(foreignRunOf('/home/b/state/runs/20261201-1-agg', '/home/b/state')).toBeNull();
    expect(foreignRunOf('/home/b/state/runs/20261201-1-agg', '/home/b/state/')).toBeNull();
    expect(foreignRunOf(null, '/home/b/state')).toBeNull();
  });

  it('a value that is no run dir (a logs path, any folder) names no run', () => {
    expect(foreignRunOf('/home/a/state/runs/r1/logs', '/home/b/state')).toBeNull();
    expect(foreignRunOf('/home/a/state/runs/r1/logs/agg-0.log', '/home/b/state')).toBeNull();
    expect(foreignRunOf('/home/a/somewhere', '/home/b/state')).toBeNull();
    expect(foreignRunOf('', '/home/b/state')).toBeNull();
  });
});

describe('judgeOtherRun: only a record that proves the run live now spares a process', () => {
  it('a record of this boot, supervisor alive, the process one the run owns: live', () => {
    expect(judgeOtherRun(rec(), 'boot-a', live())).toEqual({ live: true });
  });

  it('no readable record: a leftover', () => {
    expect(judgeOtherRun(null, 'boot-a', null)).toEqual({ live: false, why: 'no readable run record' });
  });

  it('a record of another boot, or one that cannot say its boot: a leftover', () => {
    expect(judgeOtherRun(rec({ bootId: 'boot-b' }), 'boot-a', live())).toMatchObject({ live: false, why: 'the record is not from this boot' });
    expect(judgeOtherRun(rec({ bootId: null }), 'boot-a', live())).toMatchObject({ live: false });
    expect(judgeOtherRun(rec({ bootId: undefined }), 'boot-a', live())).toMatchObject({ live: false });
    expect(judgeOtherRun(rec(), null, live())).toMatchObject({ live: false });
  });

  it('a run whose supervisor is gone (stopped, or killed while its processes live on): a leftover', () => {
    expect(judgeOtherRun(rec(), 'boot-a', live({ supervisor: false }))).toEqual({ live: false, why: 'its supervisor is not running' });
  });

  it('a process of a live run its record does not name yet (or any more): the run\'s, by its marker', () => {
    expect(judgeOtherRun(rec(), 'boot-a', live({ ownedPids: [10] }))).toEqual({ live: true });
  });
});

describe('stopCommandFor', () => {
  it('names the state dir and run, quoting a path with spaces as one word', () => {
    expect(stopCommandFor({ stateDir: '/x/state', runId: 'r1' })).toBe('dynamo-dev teardown --state-dir /x/state --run r1');
    expect(stopCommandFor({ stateDir: '/x/my state', runId: 'r1' })).toBe("dynamo-dev teardown --state-dir '/x/my state' --run r1");
  });
});

const killSupervisor = async (pid: number) => {
  process.kill(pid, 'SIGKILL');
  await waitUntil(() => !isAlive(pid), 'the supervisor to die');
};

/** A live run of state dir A: a fake supervisor and a worker tree carrying A's marker. */
async function runInA(o: { bootId?: string | null; id?: string; markerId?: string } = {}) {
  const a = home();
  const b = home();
  mkdirSync(join(a.stateDir, 'runs'), { recursive: true, mode: 0o700 });
  mkdirSync(b.stateDir, { recursive: true, mode: 0o700 });
  const id = o.id ?? '20261201-120000-000-agg';
  const sup = await spawnLone('node dynamo-dev up');
  const tree = await spawnTree('honour', { [RUN_MARKER]: join(realpathSync(a.stateDir), 'runs', o.markerId ?? id) });
  const r = await writeFakeRun(a.stateDir, { id, supervisor: { pid: sup.pid, startTicks: sup.startTicks, detached: true }, processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks }] });
  await writeRun(a.stateDir, { ...r, bootId: o.bootId === undefined ? readBootId() : o.bootId });
  return { a, b, id, sup, tree };
}

describe('otherLiveRuns: what the environment and the other run\'s record say (real processes)', () => {
  it('an engine of a live run of state dir A, seen from B, belongs to that run; from A itself it is not "another" run', async () => {
    const { a, b, id, tree } = await runInA();
    const found = await otherLiveRuns(b.stateDir, [tree.engine.pid]);
    expect([...found.values()]).toEqual([{ pid: tree.engine.pid, runId: id, stateDir: realpathSync(a.stateDir) }]);
    expect((await otherLiveRuns(a.stateDir, [tree.engine.pid])).size).toBe(0);
  });

  it('the run\'s supervisor killed: its engine is a leftover from B', async () => {
    const { b, sup, tree } = await runInA();
    await killSupervisor(sup.pid);
    expect((await otherLiveRuns(b.stateDir, [tree.engine.pid])).size).toBe(0);
  });

  it('a record from another boot, or one without a boot id: a leftover', async () => {
    const other = await runInA({ bootId: 'another-boot' });
    expect((await otherLiveRuns(other.b.stateDir, [other.tree.engine.pid])).size).toBe(0);
    const none = await runInA({ bootId: null });
    expect((await otherLiveRuns(none.b.stateDir, [none.tree.engine.pid])).size).toBe(0);
  });

  it('a marker naming a run with no record: a leftover', async () => {
    const { b, tree } = await runInA({ markerId: '20261201-120000-000-gone' });
    expect((await otherLiveRuns(b.stateDir, [tree.engine.pid])).size).toBe(0);
  });

  it('only our own processes: another user\'s engine is never read, never another run\'s, even carrying the marker of a live run', async () => {
    const { a, b, id, tree } = await runInA();
    const read: number[] = [];
    // The same process as seen by root's doctor for another user: /proc/PID says a foreign uid.
    const reader = {
      uidOf: (pid: number) => (pid === tree.engine.pid ? process.getuid!() + 1 : realMarkerReader.uidOf(pid)),
      environ: (pid: number) => {
        read.push(pid);
        return realMarkerReader.environ(pid);
      },
    };
    expect((await otherLiveRuns(b.stateDir, [tree.engine.pid], { reader })).size).toBe(0);
    expect(read).not.toContain(tree.engine.pid);
    // Ours, the same way asked: its run's.
    expect([...(await otherLiveRuns(b.stateDir, [tree.pid], { reader })).values()]).toEqual([{ pid: tree.pid, runId: id, stateDir: realpathSync(a.stateDir) }]);
  });

  it('an engine without any marker: a leftover', async () => {
    const { b } = await runInA();
    const stray = await spawnLone('VLLM::EngineCore');
    expect((await otherLiveRuns(b.stateDir, [stray.pid])).size).toBe(0);
  });
});

describe('teardown --orphans in state dir B', () => {
  const onlyThese = (pids: number[]) => async () => (await listProcesses()).filter((p) => pids.includes(p.pid));

  it('leaves the engine of A\'s live run alone and says whose it is; once A\'s supervisor is gone, stops it', async () => {
    const { a, b, id, sup, tree } = await runInA();
    const first = await teardown({ stateDir: b.stateDir, graceMs: 300, orphans: true, listProcesses: onlyThese([tree.engine.pid]) });
    expect(first).toMatchObject({ orphans: 0, stopped: [], remaining: [] });
    expect(first.otherRuns).toEqual([{ pid: tree.engine.pid, name: 'VLLM::EngineCore', runId: id, stateDir: realpathSync(a.stateDir) }]);
    expect(isAlive(tree.engine.pid)).toBe(true);

    await killSupervisor(sup.pid);
    const second = await teardown({ stateDir: b.stateDir, graceMs: 300, orphans: true, listProcesses: onlyThese([tree.engine.pid]) });
    expect(second.otherRuns).toEqual([]);
    expect(second.stopped.map((r) => [r.run, r.pid, r.signal])).toEqual([[null, tree.engine.pid, 'SIGTERM']]);
    expect(isAlive(tree.engine.pid)).toBe(false);
  });
});
