import { describe, expect, it } from 'vitest';
import { aboutLeft, benchProgress, formatLeft, remainingMs, stepDone, stepMs, variantEnded } from '../../../src/bench/estimate.js';

// The time a bench will take (issue 31): before it starts from typical times, then from what its
// own steps measured; a variant that ends early drops what it will not run.

const v = (unmeasurable: string | null = null) => ({ unmeasurable });

describe('bench time estimate', () => {
  it('before anything ran: per variant start, each load run, teardown, from the engine\'s typical times', () => {
    const p = benchProgress('mocker', [v(), v(), v('no server of its own')], [1, 4], 1, 36);
    expect(p.steps.map((s) => s.kind)).toEqual(['up', 'load', 'load', 'teardown', 'up', 'load', 'load', 'teardown']);
    // 15 s up, 2 s teardown, 12 s + 36 x 600 ms at concurrency 1, at 4 divided by 4^0.6.
    expect(stepMs(p, p.steps[1])).toBe(12_000 + 36 * 600);
    expect(stepMs(p, p.steps[2])).toBeCloseTo(12_000 + (36 * 600) / 4 ** 0.6, 6);
    expect(remainingMs(p)).toBeCloseTo(2 * (15_000 + 2_000 + 33_600 + 12_000 + 21_600 / 4 ** 0.6), 6);
    expect(remainingMs(benchProgress('vllm', [v()], [1], 1, 10))).toBe(120_000 + 10_000 + 12_000 + 10_000);
  });

  it('a measured step teaches the others of its kind; a done step is no longer counted', () => {
    let p = benchProgress('mocker', [v(), v()], [1], 1, 10);
    p = stepDone(p, { kind: 'up', variant: 0 }, 3_000);
    expect(stepMs(p, { kind: 'up', variant: 1 })).toBe(3_000);
    // 10 requests in 22 s at concurrency 1: 12 s of AIPerf's own start and 1 s a request.
    p = stepDone(p, { kind: 'load', variant: 0, concurrency: 1, requests: 10 }, 22_000);
    expect(stepMs(p, { kind: 'load', variant: 1, concurrency: 1, requests: 10 })).toBe(22_000);
    expect(p.steps.map((s) => `${s.kind}${s.variant}`)).toEqual(['teardown0', 'up1', 'load1', 'teardown1']);
    // A load that took less than AIPerf's start: no negative time.
    const fast = stepDone(p, { kind: 'load', variant: 1, concurrency: 1, requests: 10 }, 1_000);
    expect(fast.measured.requestMs.at(-1)).toBe(0);
  });

  it('a variant that ends early (a gate failed at ready) drops its load runs, keeps its teardown', () => {
    let p = benchProgress('mocker', [v(), v()], [1, 4], 2, 10);
    p = variantEnded(p, 0, true);
    expect(p.steps.filter((s) => s.variant === 0).map((s) => s.kind)).toEqual(['teardown']);
    p = variantEnded(p, 0, false);
    expect(p.steps.every((s) => s.variant === 1)).toBe(true);
  });

  it('time left in what a person plans with', () => {
    expect(formatLeft(9_999)).toBe('under 10s');
    expect(formatLeft(10_000)).toBe('10s');
    expect(formatLeft(57_000)).toBe('55s');
    expect(formatLeft(58_000)).toBe('1m00s');
    expect(formatLeft(200_000)).toBe('3m20s');
    expect(formatLeft(3_600_000)).toBe('1h00m');
    // As the progress line says it: 'under 10s left', never 'about under 10s left'.
    expect([aboutLeft(9_999), aboutLeft(10_000)]).toEqual(['under 10s', 'about 10s']);
  });
});
