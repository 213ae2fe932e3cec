import { readSmallSync, SCAN_SLICE_MS } from './proc-files.js';
import { workerAnswer, type WorkerAnswer } from './worker-answer.js';

// The raw command lines of every pid, for the process list. Each costs an open, a read and a close
// of /proc/PID/cmdline (~8 us here; 3,000 processes ~25 ms of this thread, the floor of one thread).
// On a machine with many processes a worker thread reads beside this one: both take blocks of pids
// from one shared counter, so whichever is free takes the next and neither waits for the other. A
// worker needs ~30 ms to boot, so it starts only where the list is long enough to outlast that
// (HELPER_FROM_PIDS), and this thread starts reading at once: with fewer processes, or a slow boot,
// this thread has read everything first and the worker, which claimed nothing, is ended unused.

/** Pids from which a worker thread reads beside this one (~8 ms of reads per 1,000 here, a boot ~30 ms). */
export const HELPER_FROM_PIDS = 2000;
/** Whether a worker thread reads beside this one for a list of `pids` pids. */
export const listWantsHelper = (pids: number, from = HELPER_FROM_PIDS): boolean => pids >= from;
/** Pids per claim: ~0.5 ms of reads, so this thread still yields every SCAN_SLICE_MS. */
export const CLAIM_BLOCK = 64;

/** Slots of the shared counter: the next unclaimed index, and how many claims the worker attempted. */
export const NEXT = 0;
export const HELPER_CLAIMS = 1;

/** What the worker gets: the pids and the counter, both on shared memory. */
export interface CmdlineClaims {
  pids: Int32Array;
  state: Int32Array;
}

/** One block a thread read: the index of its first pid and the raw command lines (null: gone). */
export type ClaimedBlock = [start: number, raw: (string | null)[]];

const cmdlineAt = (pid: number): string | null => readSmallSync(`/proc/${pid}/cmdline`);

/**
 * The worker's side: claims blocks until none are left, reading each. A claim is counted in
 * HELPER_CLAIMS before it is made, so once this thread has claimed past the end and still reads 0
 * there, no claim of the worker can hold a pid (Atomics are sequentially consistent).
 */
export function readClaimedBlocks({ pids, state }: CmdlineClaims): ClaimedBlock[] {
  const out: ClaimedBlock[] = [];
  for (;;) {
    Atomics.add(state, HELPER_CLAIMS, 1);
    const start = Atomics.add(state, NEXT, CLAIM_BLOCK);
    if (start >= pids.length) return out;
    const end = Math.min(pids.length, start + CLAIM_BLOCK);
    const raw: (string | null)[] = [];
    for (let i = start; i < end; i++) raw.push(cmdlineAt(pids[i]));
    out.push([start, raw]);
  }
}

const yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Raw command line of each of `pids` (same order; null for a pid gone or unreadable), read here in
 * slices of at most SCAN_SLICE_MS and, from `helperFromPids` pids on, by a worker thread beside
 * this one. `readOne` (this thread's reads) is for tests.
 */
export function readCmdlines(
  pids: readonly number[],
  o: { helperFromPids?: number; helperUrl?: URL; readOne?: (pid: number) => string | null } = {},
): Promise<(string | null)[]> {
  if (!listWantsHelper(pids.length, o.helperFromPids)) return readShared(pids, new Int32Array(2), null, o.readOne);
  const state = new Int32Array(new SharedArrayBuffer(8));
  const shared = new Int32Array(new SharedArrayBuffer(4 * pids.length));
  shared.set(pids);
  const helper = workerAnswer<ClaimedBlock[]>(o.helperUrl ?? new URL('./proc-cmdlines-worker.js', import.meta.url), { pids: shared, state } satisfies CmdlineClaims);
  return readShared(pids, state, helper, o.readOne);
}

/**
 * This thread's side of readCmdlines: claims blocks from `state` until none are left, then takes
 * the helper's answer if the helper claimed any (else ends it, still booting or idle, unwaited).
 * A helper that failed leaves its blocks unanswered: they are read here. `readOne` is for tests.
 */
export async function readShared(
  pids: readonly number[],
  state: Int32Array,
  helper: WorkerAnswer<ClaimedBlock[]> | null,
  readOne: (pid: number) => string | null = cmdlineAt,
): Promise<(string | null)[]> {
  const n = pids.length;
  const raw = new Array<string | null>(n).fill(null);
  const read = new Uint8Array(n);
  let sliceStart = performance.now();
  for (;;) {
    const start = Atomics.add(state, NEXT, CLAIM_BLOCK);
    if (start >= n) break;
    const end = Math.min(n, start + CLAIM_BLOCK);
    for (let i = start; i < end; i++) {
      raw[i] = readOne(pids[i]);
      read[i] = 1;
    }
    if (performance.now() - sliceStart > SCAN_SLICE_MS) {
      await yieldNow();
      sliceStart = performance.now();
    }
  }
  if (helper === null) return raw;
  if (Atomics.load(state, HELPER_CLAIMS) === 0) {
    helper.stop();
    return raw;
  }
  mergeBlocks(raw, read, await helper.answer);
  for (let i = 0; i < n; i++) if (!read[i]) raw[i] = readOne(pids[i]);
  return raw;
}

/** Pure: puts the worker's blocks into `raw`, marking them read; null (no answer) adds nothing. */
export function mergeBlocks(raw: (string | null)[], read: Uint8Array, blocks: ClaimedBlock[] | null): void {
  for (const [start, vals] of blocks ?? []) {
    for (let k = 0; k < vals.length; k++) {
      raw[start + k] = vals[k];
      read[start + k] = 1;
    }
  }
}
