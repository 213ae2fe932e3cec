import { describe, expect, it } from 'vitest';
import { estimatedPrefixTokens, hitThreshold, randomLevelHitRate, summarize, type ProbeSend } from '../../../src/probe/stats.js';

// The probe's statistics at their edges: exactly enough cached tokens is a hit, a first-token time
// exactly 0.7 of the reference is a hit, and the counts a user reads in --json.
function send(prefix: number, repeat: number, o: Partial<ProbeSend> = {}): ProbeSend {
  return {
    prefix, repeat, ok: true, error: null, ttftMs: 40, totalMs: 50, cachedTokens: repeat === 0 ? 0 : 1000,
    promptTokens: 1000, workerId: 'w1', prefixWords: 1000, tailWords: 0, ...o,
  };
}

describe('randomLevelHitRate', () => {
  it('exactly two sends per prefix (one repeat) is the smallest judged case: 1/N', () => {
    expect(randomLevelHitRate(2, 2)).toBe(0.5);
    expect(randomLevelHitRate(4, 2)).toBe(0.25);
  });
  it('no worker says nothing', () => {
    expect(randomLevelHitRate(0, 6)).toBeNull();
  });
  it('three repeats over two workers: the mean of 1/2, 3/4', () => {
    expect(randomLevelHitRate(2, 3)).toBe(0.625);
  });
});

describe('what counts as a hit', () => {
  it('cached tokens exactly 80% of the prefix are a hit; one fewer is a miss', () => {
    const s = summarize([send(0, 0), send(0, 1, { cachedTokens: 800 }), send(0, 2, { cachedTokens: 799 })]);
    expect(s.judgements).toEqual([
      { prefix: 0, repeat: 1, method: 'cached_tokens', hit: true },
      { prefix: 0, repeat: 2, method: 'cached_tokens', hit: false },
    ]);
  });

  it('a block size of 1 (or none) judges the prefix as it is', () => {
    expect(hitThreshold(100, 1)).toBe(80);
    expect(hitThreshold(1503.5, 1)).toBeCloseTo(0.8 * 1503.5, 9);
    expect(hitThreshold(100, 0)).toBe(80);
    expect(hitThreshold(130, 64)).toBeCloseTo(0.8 * 128, 9);
    expect(hitThreshold(128, 64)).toBeCloseTo(0.8 * 128, 9);
  });

  it('a prompt of no words at all falls back to the prefix word count', () => {
    expect(estimatedPrefixTokens({ promptTokens: 500, prefixWords: 0, tailWords: 0 })).toBe(0);
    expect(estimatedPrefixTokens({ promptTokens: 500, prefixWords: 300, tailWords: 200 })).toBe(300);
  });

  it('no first-token time anywhere: a repeat without cached_tokens cannot be judged', () => {
    const s = summarize([send(0, 0, { cachedTokens: null, ttftMs: null }), send(0, 1, { cachedTokens: null, ttftMs: 10 })]);
    expect(s).toMatchObject({ repeatsJudged: 0, hits: 0, hitRate: null, method: null, firstRepeatHitRate: null });
  });

  it('answers without a first-token time are left out of the medians, not counted as 0', () => {
    const s = summarize([
      send(0, 0, { ttftMs: 100 }), send(1, 0, { ttftMs: null }), send(2, 0, { ttftMs: 50 }),
      send(0, 1, { ttftMs: 20 }), send(1, 1, { ttftMs: null }), send(2, 1, { ttftMs: 30 }),
    ]);
    expect(s.ttft.firstMedianMs).toBe(75);
    expect(s.ttft.repeatMedianMs).toBe(25);
  });

});

describe('counts per run and per prefix', () => {
  it('sends out of order are grouped per prefix in order, repeats in order', () => {
    const s = summarize([send(1, 1, { workerId: 'b' }), send(0, 1), send(1, 0, { workerId: 'a' }), send(0, 0)]);
    expect(s.perPrefix.map((p) => [p.prefix, p.workers, p.repeats, p.hits])).toEqual([[0, ['w1'], 1, 1], [1, ['a', 'b'], 1, 1]]);
    expect(s.judgements.map((j) => j.prefix)).toEqual([0, 1]);
    expect(s.firstRepeatJudged).toBe(2);
    expect(s.firstRepeatHits).toBe(2);
  });

  it('only the first repeat counts for the first-repeat rate', () => {
    const s = summarize([send(0, 0), send(0, 1, { cachedTokens: 0 }), send(0, 2), send(0, 3)]);
    expect(s).toMatchObject({ hits: 2, repeatsJudged: 3, firstRepeatJudged: 1, firstRepeatHits: 0, firstRepeatHitRate: 0 });
  });

  it('affinity needs the worker of the first send; a failed send names no worker', () => {
    const s = summarize([
      send(0, 0, { workerId: null }), send(0, 1, { workerId: 'a' }),
      send(1, 0, { workerId: 'a' }), send(1, 1, { workerId: 'a' }), send(1, 2, { workerId: 'b' }), send(1, 3, { workerId: null }),
      send(1, 4, { ok: false, error: 'x', workerId: 'c', cachedTokens: null, ttftMs: null }),
    ]);
    expect(s.affinity).toBe(0.5);
    expect(s.workers).toEqual(['a', 'b']);
    expect(s.workerIdsReported).toBe(false);
    expect(s.perPrefix[1].workers).toEqual(['a', 'b']);
    expect(s.meanWorkersPerPrefix).toBe(1.5);
  });

  it('no worker ids at all: no workers, no affinity, no random level', () => {
    const s = summarize([send(0, 0, { workerId: null }), send(0, 1, { workerId: null })]);
    expect(s).toMatchObject({ workers: [], workerIdsReported: false, meanWorkersPerPrefix: null, affinity: null, randomHitRate: null, randomAffinity: null });
  });

  it('nothing answered: nothing reported, nothing judged', () => {
    const s = summarize([send(0, 0, { ok: false, error: 'x' })]);
    expect(s).toMatchObject({ sends: 1, ok: 0, failed: 1, workerIdsReported: false, workers: [], hitRate: null });
    expect(summarize([])).toMatchObject({ sends: 0, randomHitRate: null, meanWorkersPerPrefix: null, method: null });
  });

  it('one worker: a router that ignores prefixes would hit every repeat and always return to it', () => {
    const s = summarize([send(0, 0), send(0, 1), send(0, 2)]);
    expect(s.randomHitRate).toBe(1);
    expect(s.randomAffinity).toBe(1);
  });

  it('the random level is computed over the most sends any prefix got', () => {
    const s = summarize([send(0, 0, { workerId: 'a' }), send(0, 1, { workerId: 'b' }), send(0, 2, { workerId: 'a' }), send(1, 0, { workerId: 'b' })]);
    expect(s.randomHitRate).toBe(0.625);
    expect(s.randomAffinity).toBe(0.5);
  });
});

describe('summarize: repeats on a worker that had served their prefix', () => {
  it('counts a repeat back on any earlier worker of its prefix (not only the first), judged by cached_tokens, and its hits', () => {
    const s = summarize([
      send(0, 0, { workerId: 'a' }),
      send(0, 1, { workerId: 'b', cachedTokens: 0 }), // cold on b
      send(0, 2, { workerId: 'b', cachedTokens: 0 }), // back on b: warm, missed
      send(0, 3, { workerId: 'a', cachedTokens: 1000 }), // back on a: warm, hit
      send(0, 4, { workerId: 'c', cachedTokens: 1000 }), // a hit on a new worker is not warm
      send(0, 5, { workerId: 'a', cachedTokens: null }), // not judged
      send(0, 6, { workerId: null, cachedTokens: 0 }), // no worker id
    ]);
    expect(s).toMatchObject({ warmRepeats: 2, warmHits: 1 });
  });
});
