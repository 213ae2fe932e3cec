import type { Clock, TimerHandle } from '../../src/run/clock.js';

// Virtual time for the supervisor and its policies: timers fire only when a test advances the
// clock, in deadline order, with pending promise chains settled after each.

interface Timer { handle: TimerHandle; at: number; fn: () => void; every: number | null }

const settle = () => new Promise<void>((r) => setImmediate(r));

export class FakeClock implements Clock {
  t = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.t;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((r) => this.setTimeout(r, ms));
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = {};
    this.timers.push({ handle, at: this.t + Math.max(0, ms), fn, every: null });
    return handle;
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    const handle = {};
    this.timers.push({ handle, at: this.t + Math.max(1, ms), fn, every: Math.max(1, ms) });
    return handle;
  }

  clear(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.handle !== handle);
  }

  /** Pending timers (a test can assert that nothing is left behind). */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by ms, firing every timer due on the way. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await settle();
    for (;;) {
      const next = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.t = next.at;
      if (next.every === null) this.clear(next.handle);
      else next.at += next.every;
      next.fn();
      await settle();
    }
    this.t = end;
    await settle();
  }
}
