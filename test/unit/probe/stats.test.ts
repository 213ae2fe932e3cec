import { describe, expect, it } from 'vitest';
import { estimatedPrefixTokens, hitThreshold, median, randomLevelHitRate, summarize, type ProbeSend } from '../../../src/probe/stats.js';

const PREFIX_WORDS = 1500;
const TAIL_WORDS = 17;

function send(prefix: number, repeat: number, o: Partial<ProbeSend> = {}): ProbeSend {
  return {
    prefix, repeat, ok: true, error: null, ttftMs: 30, totalMs: 40, cachedTokens: repeat === 0 ? 0 : 1488,
    promptTokens: 1520, workerId: 'w1', prefixWords: PREFIX_WORDS, tailWords: TAIL_WORDS, ...o,
  };
}

describe('randomLevelHitRate', () => {
  it('two workers, six sends per prefix: 81% (1/2, 3/4, 7/8, 15/16, 31/32 averaged)', () => {
    expect(randomLevelHitRate(2, 6)).toBeCloseTo((0.5 + 0.75 + 0.875 + 0.9375 + 0.96875) / 5, 10);
  });
  it('one worker always hits; more workers hit less', () => {
    expect(randomLevelHitRate(1, 6)).toBe(1);
    expect(randomLevelHitRate(4, 6)!).toBeLessThan(randomLevelHitRate(2, 6)!);
    expect(randomLevelHitRate(2, 1)).toBeNull();
  });
});

describe('summarize', () => {
  it('a repeat hits when cached_tokens covers >= 80% of the prefix share of prompt_tokens', () => {
    // prefix share of 1520 prompt tokens = 1520 * 1500/1517 ~ 1503; 80% ~ 1202
    expect(estimatedPrefixTokens({ promptTokens: 1520, prefixWords: 1500, tailWords: 17 })).toBeCloseTo(1503, 0);
    const s = summarize([
      send(0, 0), send(0, 1, { cachedTokens: 1488 }), send(0, 2, { cachedTokens: 1216 }), send(0, 3, { cachedTokens: 1184 }), send(0, 4, { cachedTokens: 16 }),
    ]);
    expect(s.judgements.map((j) => j.hit)).toEqual([true, true, false, false]);
    expect(s).toMatchObject({ hits: 2, repeatsJudged: 4, hitRate: 0.5, method: 'cached_tokens', firstRepeatHitRate: 1 });
  });

  it('with the workers\' block size, a hit is judged on the whole blocks of the prefix (the mocker caches 64-token blocks)', () => {
    // A 100-token prefix on 64-token blocks: one block (64 tokens) is all any engine can reuse.
    expect(hitThreshold(100, 64)).toBeCloseTo(51.2, 6);
    expect(hitThreshold(100, null)).toBe(80);
    expect(hitThreshold(1503, 16)).toBeCloseTo(0.8 * 1488, 6);
    expect(hitThreshold(40, 64)).toBeCloseTo(51.2, 6); // shorter than a block: never a hit (nothing is cacheable)
    const short = (o: Partial<ProbeSend>) => send(0, 1, { promptTokens: 110, prefixWords: 100, tailWords: 10, ...o });
    const prefix = estimatedPrefixTokens({ promptTokens: 110, prefixWords: 100, tailWords: 10 }); // 100 tokens
    expect(prefix).toBe(100);
    const sends = [send(0, 0, { promptTokens: 110, prefixWords: 100, tailWords: 10 }), short({ cachedTokens: 64 }), { ...short({ cachedTokens: 0 }), repeat: 2 }];
    // Judged without the block size, a full one-block hit looks like a miss (64 < 80).
    expect(summarize(sends).judgements.map((j) => j.hit)).toEqual([false, false]);
    expect(summarize(sends, { blockSize: 64 }).judgements.map((j) => j.hit)).toEqual([true, false]);
  });

  it('without prompt_tokens the prefix word count is the reference', () => {
    const s = summarize([send(0, 0, { promptTokens: null }), send(0, 1, { promptTokens: null, cachedTokens: 1200 }), send(0, 2, { promptTokens: null, cachedTokens: 1100 })]);
    expect(s.judgements.map((j) => j.hit)).toEqual([true, false]);
  });

  it('without cached_tokens no repeat is judged a hit or a miss, whatever its first-token time (issue 25); affinity still counts', () => {
    const s = summarize([
      send(0, 0, { cachedTokens: null, ttftMs: 40, workerId: 'a' }),
      send(0, 1, { cachedTokens: null, ttftMs: 12, workerId: 'a' }),
      send(0, 2, { cachedTokens: null, ttftMs: 38, workerId: 'a' }),
      send(1, 0, { cachedTokens: null, ttftMs: 900, workerId: 'b' }),
      send(1, 1, { cachedTokens: null, ttftMs: 41, workerId: 'a' }),
    ]);
    expect(s).toMatchObject({ judgements: [], repeatsJudged: 0, hits: 0, hitRate: null, method: null, affinity: 2 / 3, affinityJudged: 3 });
    expect(s.ttft).toMatchObject({ firstMedianMs: 470, hitMedianMs: null, missMedianMs: null });
  });

  it('counts workers per prefix and affinity to the prefix\'s first worker', () => {
    const s = summarize([
      send(0, 0, { workerId: 'a' }), send(0, 1, { workerId: 'a' }), send(0, 2, { workerId: 'a' }),
      send(1, 0, { workerId: 'b' }), send(1, 1, { workerId: 'a' }), send(1, 2, { workerId: 'b' }),
    ]);
    expect(s.workers).toEqual(['a', 'b']);
    expect(s.perPrefix.map((p) => p.workers)).toEqual([['a'], ['b', 'a']]);
    expect(s.meanWorkersPerPrefix).toBe(1.5);
    expect(s.affinity).toBe(0.75);
    expect(s.randomAffinity).toBe(0.5);
    expect(s.randomHitRate).toBeCloseTo((0.5 + 0.75) / 2, 10);
    expect(s.workerIdsReported).toBe(true);
  });

  it('failed sends are counted, not judged', () => {
    const s = summarize([send(0, 0), send(0, 1, { ok: false, error: 'HTTP 500', ttftMs: null, cachedTokens: null, workerId: null }), send(0, 2)]);
    expect(s).toMatchObject({ sends: 3, ok: 2, failed: 1, repeatsJudged: 1, hits: 1 });
    expect(s.perPrefix[0].cachedTokens).toEqual([0, null, 1488]);
  });

  it('median of even and odd lists', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBeNull();
    // Numbers sorted as numbers (issue 29): a string sort makes [9, 10, 11]'s middle 11.
    for (const xs of [[9, 10, 11], [11, 9, 10], [10, 11, 9]]) expect(median(xs)).toBe(10);
  });
});
