import { afterEach, describe, expect, it } from 'vitest';
import { eachPid, listPids } from '../../../src/host/procs/proc-files.js';
import {
  ancestors, ancestorsIn, childrenOf, descendants, descendantsIn, groupExists, scanFor, scanProc, scanProcAsync,
  type ProcStat,
} from '../../../src/run/proc.js';
import { deadPid, killStarted, spawnTree } from '../../helpers/proc-trees.js';

// Process facts in proportion to what is asked: a run's own tree through the children files, the
// whole machine only while a recorded process group lives, and never a long stall of the event loop.

afterEach(() => killStarted());

const pidsOf = (xs: { pid: number }[]) => xs.map((x) => x.pid).sort((a, b) => a - b);

describe('walking a tree down its children files', () => {
  it('finds the same descendants as a full scan, including one that left the group with setsid', async () => {
    const tree = await spawnTree('escape');
    const walked = descendants(tree.pid);
    expect(pidsOf(walked)).toEqual(pidsOf(descendantsIn(scanProc(), tree.pid)));
    expect(walked.find((d) => d.pid === tree.engine.pid)).toEqual(tree.engine);
    expect(childrenOf(deadPid())).toEqual([]);
  });

  it('ancestors one parent at a time match the scan', () => {
    expect(ancestors(process.pid)).toEqual(ancestorsIn(scanProc(), process.pid));
  });
});

describe('scanFor (what liveness of recorded runs needs)', () => {
  it('no recorded group alive: only the recorded pids that live and their descendants, not the machine', async () => {
    const tree = await spawnTree('honour');
    process.kill(-tree.pid, 'SIGKILL');
    const dead = deadPid();
    const scan = await scanFor([process.pid, dead], [dead]);
    expect(scan.map((s) => s.pid)).toContain(process.pid);
    expect(scan.map((s) => s.pid)).not.toContain(dead);
    expect(scan.map((s) => s.pid)).not.toContain(1);
    expect(scan.length).toBeLessThan(listPids().length);
  });

  it('a recorded group with a member: every process (members are found by pgid only)', async () => {
    const tree = await spawnTree('honour');
    expect(groupExists(tree.pid)).toBe(true);
    const scan = await scanFor([], [tree.pid]);
    expect(scan.map((s) => s.pid)).toEqual(expect.arrayContaining([1, tree.pid, tree.engine.pid]));
    expect(groupExists(deadPid())).toBe(false);
    expect(groupExists(1)).toBe(false); // never kill(-1): that would mean every process
  });
});

describe('scanning every process', () => {
  it('scanProcAsync lists what scanProc lists', async () => {
    const tree = await spawnTree('honour');
    const [sync, async] = [scanProc(), await scanProcAsync()];
    // The same processes with the same identity; their run state (S/R) is a moment's, and may
    // change between the two reads on a busy machine.
    const identity = (s: ProcStat | undefined) => s && { ...s, state: undefined };
    for (const pid of [process.pid, tree.pid, tree.engine.pid]) {
      expect(identity(async.find((s) => s.pid === pid))).toEqual(identity(sync.find((s) => s.pid === pid)));
      expect(async.find((s) => s.pid === pid)).toBeDefined();
    }
  });

  it('eachPid lets the event loop run between slices of a few ms', async () => {
    let turns = 0;
    let on = true;
    const tick = () => {
      turns++;
      if (on) setImmediate(tick);
    };
    setImmediate(tick);
    const busy = (ms: number) => {
      const end = performance.now() + ms;
      while (performance.now() < end) { /* a slow /proc read */ }
    };
    // 48 reads of 1 ms: with 4 ms slices the loop gets a turn at least every ~16 reads.
    const out = await eachPid(Array.from({ length: 48 }, (_, i) => i), (i) => (busy(1), i), 4);
    on = false;
    expect(out).toHaveLength(48);
    expect(turns).toBeGreaterThanOrEqual(2);
  });
});
