import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLAIM_BLOCK, HELPER_CLAIMS, HELPER_FROM_PIDS, listWantsHelper, NEXT, readClaimedBlocks, readCmdlines, readShared, type ClaimedBlock,
} from '../../../src/host/proc-cmdlines.js';
import type { WorkerAnswer } from '../../../src/host/worker-answer.js';
import { readSmallSync } from '../../../src/host/proc-files.js';
import { killChildren } from '../../helpers/children.js';
import { ROOT } from '../../helpers/cli.js';

// The process list's command lines: this thread and, from HELPER_FROM_PIDS pids on, a worker
// thread take blocks of pids from one shared counter (only the build has the worker: the sources
// under test are .ts). What each reads must land at its pid's index, once, whoever read it.

const children: ChildProcess[] = [];
afterEach(() => killChildren(children));

const BUILT_WORKER = pathToFileURL(join(ROOT, 'dist', 'host', 'proc-cmdlines-worker.js'));

/** n pids of real processes with distinct command lines (sleepers), plus a pid that is gone. */
async function somePids(n: number): Promise<{ pids: number[]; gone: number }> {
  const pids: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = spawn('sleep', [`${300 + i}`], { stdio: 'ignore' });
    children.push(c);
    await once(c, 'spawn');
    pids.push(c.pid!);
  }
  const gone = spawnSync('true').pid!; // exited and reaped: its /proc entry is gone
  return { pids, gone };
}
const direct = (pids: readonly number[]) => pids.map((p) => readSmallSync(`/proc/${p}/cmdline`));
const shared = (pids: readonly number[]) => {
  const a = new Int32Array(new SharedArrayBuffer(4 * pids.length));
  a.set(pids);
  return a;
};

/** A helper that never answers unless told, and records whether it was ended. */
function fakeHelper(answer: Promise<ClaimedBlock[] | null>): WorkerAnswer<ClaimedBlock[]> & { stopped: boolean } {
  const h = { answer, stopped: false, stop: () => { h.stopped = true; } };
  return h;
}

describe('the shared counter', () => {
  it("the worker's side takes the blocks left, each at its index, and counts every claim it tried before making it", async () => {
    const { pids, gone } = await somePids(3);
    const all = [...Array.from({ length: 2 * CLAIM_BLOCK + 5 }, (_, i) => pids[i % 3]), gone];
    const state = new Int32Array(new SharedArrayBuffer(8));
    Atomics.store(state, NEXT, CLAIM_BLOCK); // block 0 taken by the other thread
    const blocks = readClaimedBlocks({ pids: shared(all), state });
    expect(blocks.map(([start, raw]) => [start, raw.length])).toEqual([[CLAIM_BLOCK, CLAIM_BLOCK], [2 * CLAIM_BLOCK, 6]]);
    const want = direct(all);
    for (const [start, raw] of blocks) expect(raw).toEqual(want.slice(start, start + raw.length));
    expect(raw(blocks).at(-1)).toBeNull(); // the gone pid
    expect(Atomics.load(state, HELPER_CLAIMS)).toBe(3); // two blocks and the claim past the end
  });

  it('nothing left: no block, one claim counted', () => {
    const state = new Int32Array(new SharedArrayBuffer(8));
    Atomics.store(state, NEXT, 10);
    expect(readClaimedBlocks({ pids: shared([1, 2, 3]), state })).toEqual([]);
    expect(Atomics.load(state, HELPER_CLAIMS)).toBe(1);
  });

  it('the built worker answers the blocks left on the counter, as read here', async () => {
    const { pids } = await somePids(4);
    const all = Array.from({ length: 3 * CLAIM_BLOCK }, (_, i) => pids[i % 4]);
    const state = new Int32Array(new SharedArrayBuffer(8));
    Atomics.store(state, NEXT, CLAIM_BLOCK);
    const w = new Worker(BUILT_WORKER, { workerData: { pids: shared(all), state } });
    const [blocks] = (await once(w, 'message')) as [ClaimedBlock[]];
    expect(blocks.map(([s]) => s)).toEqual([CLAIM_BLOCK, 2 * CLAIM_BLOCK]);
    expect(blocks.flatMap(([, r]) => r)).toEqual(direct(all).slice(CLAIM_BLOCK));
  });
});

const raw = (blocks: ClaimedBlock[]) => blocks.flatMap(([, r]) => r);

describe("this thread's side", () => {
  const PIDS = Array.from({ length: 3 * CLAIM_BLOCK + 7 }, (_, i) => 100_000 + i);
  const fake = (pid: number) => `cmd-${pid}`;

  it("merges the helper's blocks at their indexes and reads none of them again", async () => {
    const state = new Int32Array(new SharedArrayBuffer(8));
    // The helper took block 1 before this thread started.
    Atomics.store(state, HELPER_CLAIMS, 1);
    const helperBlock: ClaimedBlock = [CLAIM_BLOCK, PIDS.slice(CLAIM_BLOCK, 2 * CLAIM_BLOCK).map((p) => `helper-${p}`)];
    // This thread claims from 0; the counter skips the helper's block as the real one would.
    const readHere: number[] = [];
    const read = (pid: number) => {
      readHere.push(pid);
      if (pid === PIDS[CLAIM_BLOCK - 1]) Atomics.add(state, NEXT, CLAIM_BLOCK); // helper claims block 1 meanwhile
      return fake(pid);
    };
    const h = fakeHelper(Promise.resolve([helperBlock]));
    const out = await readShared(PIDS, state, h, read);
    expect(out.slice(CLAIM_BLOCK, 2 * CLAIM_BLOCK)).toEqual(helperBlock[1]);
    expect(out.filter((_, i) => i < CLAIM_BLOCK || i >= 2 * CLAIM_BLOCK)).toEqual(PIDS.filter((_, i) => i < CLAIM_BLOCK || i >= 2 * CLAIM_BLOCK).map(fake));
    expect(readHere).toHaveLength(PIDS.length - CLAIM_BLOCK);
    expect(h.stopped).toBe(false);
  });

  it('a helper that claimed a block and died without answering: its block is read here, after the rest', async () => {
    const state = new Int32Array(new SharedArrayBuffer(8));
    Atomics.store(state, HELPER_CLAIMS, 1);
    Atomics.store(state, NEXT, CLAIM_BLOCK); // block 0 is the dead helper's
    const readHere: number[] = [];
    const out = await readShared(PIDS, state, fakeHelper(Promise.resolve(null)), (pid) => (readHere.push(pid), fake(pid)));
    expect(out).toEqual(PIDS.map(fake));
    expect(readHere).toEqual([...PIDS.slice(CLAIM_BLOCK), ...PIDS.slice(0, CLAIM_BLOCK)]);
  });

  it('a helper that claimed nothing (still booting) is ended, not waited for', async () => {
    const state = new Int32Array(new SharedArrayBuffer(8));
    const h = fakeHelper(new Promise(() => {})); // would never answer
    const out = await readShared(PIDS, state, h, fake);
    expect(out).toEqual(PIDS.map(fake));
    expect(h.stopped).toBe(true);
  });

  it('yields to the event loop while reading: a timer due meanwhile runs before the read ends', async () => {
    let fired = false;
    setTimeout(() => { fired = true; }, 0);
    let firedDuring = false;
    const slow = (pid: number) => {
      const t = performance.now();
      while (performance.now() - t < 0.2); // 64 pids = ~13 ms a block: past the 4 ms slice
      firedDuring ||= fired;
      return fake(pid);
    };
    await readShared(PIDS, new Int32Array(2), null, slow);
    expect(firedDuring).toBe(true);
  });
});

describe('readCmdlines', () => {
  it(`a worker from exactly ${HELPER_FROM_PIDS} pids on`, () => {
    expect(HELPER_FROM_PIDS).toBe(2000);
    expect(listWantsHelper(1999)).toBe(false);
    expect(listWantsHelper(2000)).toBe(true);
    expect(listWantsHelper(5, 5)).toBe(true);
  });

  it('a short list, read here alone: the same lines as reading each, null for a pid gone', async () => {
    const { pids, gone } = await somePids(3);
    const all = [process.pid, ...pids, gone];
    const out = await readCmdlines(all);
    expect(out).toEqual(direct(all));
    expect(out.at(-1)).toBeNull();
    expect(out[1]).toBe('sleep\u0000300\u0000');
  });

  it('with the built worker beside this thread: the same lines in the same order, the worker reading some of them', async () => {
    const { pids, gone } = await somePids(5);
    const all = [...Array.from({ length: 40 * CLAIM_BLOCK }, (_, i) => pids[i % 5]), gone];
    // This thread reads slowly (0.1 ms a pid, ~260 ms in all), so the worker boots in time to take blocks.
    let here = 0;
    const slowHere = (pid: number) => {
      here++;
      const t = performance.now();
      while (performance.now() - t < 0.1);
      return readSmallSync(`/proc/${pid}/cmdline`);
    };
    expect(await readCmdlines(all, { helperUrl: BUILT_WORKER, readOne: slowHere })).toEqual(direct(all));
    expect(here).toBeGreaterThan(0);
    expect(here).toBeLessThan(all.length - CLAIM_BLOCK); // at least one block was the worker's
  });
});
