// Time as a dependency: the supervisor, its policies and the stop loop read the time and wait
// through this, so tests drive them with a fake clock (exact deadlines, no real sleeps).

/** Whatever the clock's timer functions return; only passed back to clear(). */
export type TimerHandle = object;

export interface Clock {
  /** Milliseconds on a monotonic scale (only differences mean anything). */
  now(): number;
  /** Resolves after ms; keeps the process alive meanwhile (a stop in progress must finish). */
  sleep(ms: number): Promise<void>;
  /** fn once after ms; unref'd unless `keepAlive`. */
  setTimeout(fn: () => void, ms: number, keepAlive?: boolean): TimerHandle;
  /** fn every ms; unref'd unless `keepAlive`. */
  setInterval(fn: () => void, ms: number, keepAlive?: boolean): TimerHandle;
  clear(t: TimerHandle): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise<void>((r) => setTimeout(r, ms)),
  setTimeout(fn, ms, keepAlive = false) {
    const t = setTimeout(fn, ms);
    if (!keepAlive) t.unref();
    return t;
  },
  setInterval(fn, ms, keepAlive = false) {
    const t = setInterval(fn, ms);
    if (!keepAlive) t.unref();
    return t;
  },
  clear(t) {
    clearTimeout(t as NodeJS.Timeout); // clears intervals too
  },
};

/** Blocks the thread for `ms`: only for a moment's wait inside a synchronous decision (a lock's holder still writing, an exec still in progress). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
