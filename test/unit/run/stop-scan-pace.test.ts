import { describe, expect, it } from 'vitest';
import { nextScanInMs } from '../../../src/run/policy/escalation.js';

// How often a stop looks at the process table: at the fast pace during the first second after
// SIGTERM (most processes end there) and for half a second after SIGKILL, at the lighter 50 ms pace
// in between, so a slow shutdown does not read every process 100 times a second.

describe('the stop scans fast only while an end is likely', () => {
  const pace = (now: number, t0: number, killAt = t0 + 10_000) => nextScanInMs({ now, t0, killAt, pollMs: 10 });

  it('fast for exactly the first second after the stop began, whenever it began', () => {
    expect(pace(5_000, 5_000)).toBe(10);
    expect(pace(5_999, 5_000)).toBe(10);
    expect(pace(6_000, 5_000)).toBe(50);
    expect(pace(8_000, 5_000)).toBe(50);
  });

  it('fast for exactly half a second after the kill deadline, then light again', () => {
    expect(pace(15_000, 5_000)).toBe(10);
    expect(pace(15_499, 5_000)).toBe(10);
    expect(pace(15_500, 5_000)).toBe(50);
  });

  it('never past the kill deadline: the last wait before it is cut short', () => {
    expect(pace(14_980, 5_000)).toBe(20);
  });
});
