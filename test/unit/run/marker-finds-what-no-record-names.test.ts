import { afterEach, describe, expect, it } from 'vitest';
import { tempHomes } from '../../helpers/cli.js';
import { deadPid, killStarted, spawnTree, writeFakeRun, type Tree } from '../../helpers/proc-trees.js';
import { livenessIn, markerFor, readBootId, scanRuns } from '../../../src/run/run-scan.js';
import { readStartTicks } from '../../../src/run/proc.js';
import type { RunRecord } from '../../../src/run/types.js';

// A process of a run that no record names (a helper that double-forked, a spawn `up` was killed
// before recording) is still the run's when it carries the run's marker: status counts it, and
// teardown finds it. Only runs that may be live are searched, from the oldest of their starts, and
// a stale record of another boot naming the same pid never hides it. Real process trees, each
// carrying a marker; every one is SIGKILLed after its test.

const home = tempHomes('dd-marked-');
afterEach(() => killStarted());

const ourStart = readStartTicks(process.pid)!;

/** A run whose supervisor (dead now) started with this test process; it names no process. */
async function bareRun(stateDir: string, id: string, state: RunRecord['state'], supStart = ourStart): Promise<RunRecord> {
  return writeFakeRun(stateDir, { id, state, supervisor: { pid: deadPid(), startTicks: supStart }, processes: [] });
}

/** A process tree carrying the marker of run `id` of `stateDir`, as everything up starts does. */
const markedTree = (stateDir: string, id: string): Promise<Tree> => spawnTree('honour', { DYNAMO_DEV_RUN: markerFor(stateDir, id) });

describe('a live run', () => {
  it('counts the processes carrying its marker that no record names, and they join the scan', async () => {
    const h = home();
    const rec = await bareRun(h.stateDir, 'r-live', 'ready');
    const tree = await markedTree(h.stateDir, rec.id);
    const rs = await scanRuns(h.stateDir, [rec]);
    expect(rs.marks.get(tree.pid)).toBe(markerFor(h.stateDir, rec.id));
    expect(rs.scan.map((s) => s.pid)).toContain(tree.pid);
    expect(rs.scan.map((s) => s.pid)).toContain(tree.engine.pid);
    const l = livenessIn(h.stateDir, rec, rs);
    expect(l.processes).toBe(true);
    expect(l.marked).toEqual(expect.arrayContaining([tree.pid, tree.engine.pid]));
    expect(l.marked.every((pid) => rs.marks.has(pid))).toBe(true);
  });

  it('with a live group recorded (a full scan), each process is listed once, the marked ones included', async () => {
    const h = home();
    const worker = await spawnTree('honour');
    const rec = await writeFakeRun(h.stateDir, {
      id: 'r-full', state: 'ready', supervisor: { pid: deadPid(), startTicks: ourStart },
      processes: [{ name: 'agg-0', pid: worker.pid, startTicks: worker.startTicks }],
    });
    const tree = await markedTree(h.stateDir, rec.id);
    const rs = await scanRuns(h.stateDir, [rec]);
    const pids = rs.scan.map((s) => s.pid);
    expect(pids).toContain(tree.pid);
    expect(new Set(pids).size).toBe(pids.length);
    expect(livenessIn(h.stateDir, rec, rs).pids).toEqual(expect.arrayContaining([worker.pid, tree.pid]));
  });

  it("an older run's marked processes are found although a newer live run's supervisor started after them", async () => {
    const h = home();
    const old = await bareRun(h.stateDir, 'r-old', 'ready');
    const tree = await markedTree(h.stateDir, old.id);
    const newer = await bareRun(h.stateDir, 'r-new', 'starting', tree.startTicks + 100_000);
    const rs = await scanRuns(h.stateDir, [newer, old]);
    expect(livenessIn(h.stateDir, old, rs).marked).toContain(tree.pid);
  });

  it('a record of another boot naming the same pid and start (a coincidence after a reboot) does not hide it', async () => {
    const h = home();
    const bootId = readBootId();
    expect(bootId).not.toBeNull();
    const rec = await bareRun(h.stateDir, 'r-now', 'ready');
    const tree = await markedTree(h.stateDir, rec.id);
    const stale: RunRecord = {
      ...(await writeFakeRun(h.stateDir, {
        id: 'r-before-reboot', state: 'ready', supervisor: { pid: deadPid(), startTicks: 1 },
        processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks }],
      })),
      bootId: 'another-boot',
    };
    const rs = await scanRuns(h.stateDir, [stale, { ...rec, bootId }]);
    expect(livenessIn(h.stateDir, { ...rec, bootId }, rs).marked).toContain(tree.pid);
    expect(livenessIn(h.stateDir, stale, rs).processes).toBe(false);
  });
});

describe('a run recorded stopped or failed', () => {
  it('is not searched (its stop verified it empty): nothing is marked for it', async () => {
    for (const state of ['stopped', 'failed'] as const) {
      const h = home();
      const rec = await bareRun(h.stateDir, `r-${state}`, state);
      await markedTree(h.stateDir, rec.id);
      const rs = await scanRuns(h.stateDir, [rec]);
      expect(rs.marks.size).toBe(0);
      expect(livenessIn(h.stateDir, rec, rs)).toMatchObject({ processes: false, marked: [] });
      killStarted();
    }
  });
});
