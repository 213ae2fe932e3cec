import { describe, expect, it } from 'vitest';
import type { ProbeStats } from '../../../src/probe/stats.js';
import { evictionNote, judge, KV_EVENTS_NEXT, MIN_JUDGED_REPEATS, STICKY_AFFINITY, verdictExitCode, WORKS_HIT_RATE } from '../../../src/probe/verdict.js';

// The probe verdict as the user reads it, from the statistics directly: each threshold pinned at
// exactly its value and just below, and the exact lines under the verdict.
function stats(o: Partial<ProbeStats> = {}): ProbeStats {
  return {
    sends: 72, ok: 72, failed: 0, repeatsJudged: 60, hits: 60, hitRate: 1, firstRepeatJudged: 12, firstRepeatHits: 12, firstRepeatHitRate: 1,
    method: 'cached_tokens', workerIdsReported: true, workers: ['w1', 'w2'], meanWorkersPerPrefix: 1, affinity: 1, affinityJudged: 60,
    randomHitRate: 0.8125, randomAffinity: 0.5, warmRepeats: 48, warmHits: 48, ttft: { firstMedianMs: 45, repeatMedianMs: 15, hitMedianMs: 15, missMedianMs: 45 },
    perPrefix: [], judgements: [], ...o,
  };
}
const AFFINE = (a: string, mean = '1.0', random = '50%') => `${a} of repeats went back to the prefix's first worker (a router that ignores prefixes: ${random}); ${mean} workers per prefix on average`;
const EVENTS_CAUSE = 'The usual cause: the KV router runs with events on while the workers publish none (frontend log: kv_event_publisher_disabled); its index stays empty and it routes by load only, with no error.';
const EVENTS_FIX = 'Fix: give each worker --kv-events-config with "enable_kv_cache_events": true, or run the frontend with --no-router-kv-events (approximate routing).';
const NOT_KV = 'If this frontend does not run --router-mode kv (round-robin and random ignore prefixes), that alone explains it.';
const RANDOM_2 = 'Random routing over 2 workers would hit about 81% of repeats if every worker could keep every prefix, less when caches evict (measured: 62-73% with two workers).';

describe('judge: enough repeats to say anything', () => {
  it(`exactly ${MIN_JUDGED_REPEATS} judged repeats are judged; one fewer is inconclusive, pointing at more repeats`, () => {
    expect(judge(stats({ repeatsJudged: MIN_JUDGED_REPEATS, hits: 4 })).code).toBe('works');
    expect(judge(stats({ sends: 4, ok: 4, repeatsJudged: MIN_JUDGED_REPEATS - 1, hits: 3 }))).toEqual({
      code: 'inconclusive',
      summary: 'too few repeats answered to judge routing (3 judged, 0 of 4 requests failed)',
      details: ['Routing is judged on the repeats of each prefix; raise --prefixes or --repeats, or look at why requests failed.'],
      next: 'dynamo-dev probe --prefixes 12 --repeats 6',
    });
  });

  it('when requests failed, the next step is the frontend log; nothing judged at all is inconclusive too', () => {
    const v = judge(stats({ sends: 72, ok: 1, failed: 71, repeatsJudged: 0, hits: 0, hitRate: null, affinityJudged: 0 }));
    expect(v.summary).toBe('too few repeats answered to judge routing (0 judged, 71 of 72 requests failed)');
    expect(v.next).toBe('dynamo-dev logs frontend');
    expect(judge(stats({ hitRate: null, affinity: null, affinityJudged: 0, workerIdsReported: false, workers: [] }))).toEqual({
      code: 'inconclusive',
      summary: 'hit rate unknown: the frontend reported neither cached_tokens nor worker ids, so routing cannot be judged',
      details: [
        'Hit rate unknown: the frontend reported no cached_tokens, and first-token time does not tell a hit from a miss.',
        'Worker ids come from nvext.worker_id (Dynamo frontends report it when asked); a proxy in front of the frontend may drop it.',
      ],
      next: null,
    });
  });

  it(`without cached_tokens, ${MIN_JUDGED_REPEATS} repeats with worker ids are judged by affinity; one fewer is not`, () => {
    const base = { hitRate: null, hits: 0, repeatsJudged: 0, method: null } as const;
    expect(judge(stats({ ...base, affinity: 1, affinityJudged: MIN_JUDGED_REPEATS })).code).toBe('works');
    expect(judge(stats({ ...base, sends: 4, ok: 4, affinity: 1, affinityJudged: MIN_JUDGED_REPEATS - 1 })).code).toBe('inconclusive');
  });
});

describe('judge: without cached_tokens (Dynamo 1.3, 1.4), by worker identity', () => {
  const base = { hitRate: null, hits: 0, repeatsJudged: 0, method: null, affinityJudged: 60 } as const;
  it('repeats back on their prefix\'s worker: works, and says the hit rate is unknown and why', () => {
    expect(judge(stats({ ...base, affinity: STICKY_AFFINITY })).code).toBe('works');
    expect(judge(stats({ ...base, affinity: 1 }), { dynamoVersion: '1.4.2' })).toEqual({
      code: 'works',
      summary: 'prefix routing works: 100% of repeats went back to their prefix\'s worker (cache hits unknown: no cached_tokens)',
      details: [
        '100% of 60 repeats went back to the worker that served their prefix first (a router that ignores prefixes: 50%)',
        'Hit rate unknown: Dynamo 1.4.2\'s frontend does not report cached_tokens (1.5.0 and newer do), and first-token time does not tell a hit from a miss.',
      ],
      next: null,
    });
  });

  it('repeats spread like random routing: random level, pointing at kv.events', () => {
    const v = judge(stats({ ...base, affinity: STICKY_AFFINITY - 0.01, meanWorkersPerPrefix: 1.9 }), { routerMode: 'kv', dynamoVersion: '1.3.1' });
    expect(v.code).toBe('random-level');
    expect(v.summary).toBe('repeats spread over workers like random routing (79% went back to their prefix\'s worker): the router is not using KV events (check kv.events)');
    expect(v.details[0]).toBe('Hit rate unknown: Dynamo 1.3.1\'s frontend does not report cached_tokens (1.5.0 and newer do), and first-token time does not tell a hit from a miss.');
    expect(v.next).toBe(KV_EVENTS_NEXT);
  });
});

describe('judge: the next step after misses on the prefix\'s worker', () => {
  it('vLLM: kv.allocated; the mocker (whose KV size kv.allocated cannot read): a probe with fewer prefixes', () => {
    const s = stats({ hits: 30, hitRate: 0.5, affinity: 1 });
    expect(judge(s, { engine: 'vllm', prefixes: 12 }).next).toBe('dynamo-dev doctor --only kv.allocated');
    const m = judge(s, { engine: 'mocker', prefixes: 12 });
    expect(m.next).toBe('dynamo-dev probe --prefixes 6');
    expect(m.details.at(-1)).toBe('The mocker logs no KV cache size for kv.allocated to read; a probe with fewer prefixes (--prefixes 6) tells a cache too small from caching switched off.');
  });
});

describe('judge: the hit-rate and affinity thresholds', () => {
  it(`a hit rate of exactly ${WORKS_HIT_RATE * 100}% with affinity of exactly ${STICKY_AFFINITY * 100}% works`, () => {
    const v = judge(stats({ hits: 48, hitRate: 0.8, affinity: 0.8, meanWorkersPerPrefix: 1.25 }));
    expect(v).toEqual({
      code: 'works',
      summary: 'prefix routing works: 80% of repeats hit the cache',
      details: ['48 of 60 repeats hit the prefix cache (80%, judged by cached_tokens)', AFFINE('80%', '1.3')],
      next: null,
    });
    expect(verdictExitCode(v)).toBe(0);
  });

  it('a hit rate just under with sticky repeats: the workers miss, not the router', () => {
    const v = judge(stats({ hits: 47, hitRate: 0.79, affinity: 0.8 }));
    expect(v).toEqual({
      code: 'inconclusive',
      summary: "repeats return to their prefix's worker but miss its cache (79% hit)",
      details: [
        '47 of 60 repeats hit the prefix cache (79%, judged by cached_tokens)',
        AFFINE('80%'),
        'Routing follows prefixes, so the misses come from the workers: a KV cache too small for --prefixes x --prefix-tokens, or prefix caching switched off.',
      ],
      next: 'dynamo-dev doctor --only kv.allocated',
    });
    expect(verdictExitCode(v)).toBe(0);
  });

  it('affinity just under with a high hit rate: random routing over caches that hold everything', () => {
    const v = judge(stats({ affinity: 0.79, meanWorkersPerPrefix: 2 }));
    expect(v).toEqual({
      code: 'random-level',
      summary: 'hit rate at random level: the router is not using KV events (check kv.events)',
      details: [
        '60 of 60 repeats hit the prefix cache (100%, judged by cached_tokens)',
        AFFINE('79%', '2.0'),
        'Repeats are spread over workers like random routing; the hits come from caches large enough to hold every prefix on every worker, not from the router.',
        RANDOM_2, EVENTS_CAUSE, EVENTS_FIX, NOT_KV,
      ],
      next: KV_EVENTS_NEXT,
    });
    expect(KV_EVENTS_NEXT).toBe('dynamo-dev doctor --only kv.events');
    expect(verdictExitCode(v)).toBe(1);
  });

  it('no worker ids: the hit rate alone decides, and the verdict says workers per prefix are unknown', () => {
    const v = judge(stats({ workerIdsReported: false, workers: [], affinity: null, meanWorkersPerPrefix: null, randomHitRate: null, randomAffinity: null, method: 'ttft' }));
    expect(v).toEqual({
      code: 'works',
      summary: 'prefix routing works: 100% of repeats hit the cache',
      details: ['60 of 60 repeats hit the prefix cache (100%, judged by first-token time)', 'The frontend reported no worker ids, so workers per prefix are unknown.'],
      next: null,
    });
    const low = judge(stats({ hits: 30, hitRate: 0.5, workerIdsReported: false, workers: [], affinity: null, randomHitRate: null, method: 'mixed' }), { routerMode: 'kv' });
    expect(low.details).toEqual(['30 of 60 repeats hit the prefix cache (50%, judged by cached_tokens and first-token time)', EVENTS_CAUSE, EVENTS_FIX]);
  });

  it('an affinity without a random level to compare reads 1/N', () => {
    const v = judge(stats({ randomAffinity: null }));
    expect(v.details[1]).toBe(AFFINE('100%', '1.0', '1/N'));
  });
});

describe('judge: the router the run uses', () => {
  it('a run routing round-robin is named as the cause, with the recipe that fixes it', () => {
    const v = judge(stats({ hits: 40, hitRate: 0.67, affinity: 0.5, meanWorkersPerPrefix: 2 }), { routerMode: 'round-robin' });
    expect(v).toEqual({
      code: 'random-level',
      summary: 'hit rate at random level: the run routes with --router-mode round-robin, which ignores prefixes',
      details: ['40 of 60 repeats hit the prefix cache (67%, judged by cached_tokens)', AFFINE('50%', '2.0'), RANDOM_2, 'Use a recipe with the KV router (frontend.routerMode: kv), e.g. agg-router.'],
      next: 'dynamo-dev up agg-router',
    });
  });

  it('round-robin with no worker count to compare: no random-level line', () => {
    const v = judge(stats({ hits: 40, hitRate: 0.67, workerIdsReported: false, workers: [], affinity: null }), { routerMode: 'round-robin' });
    expect(v.details).toEqual(['40 of 60 repeats hit the prefix cache (67%, judged by cached_tokens)', 'Use a recipe with the KV router (frontend.routerMode: kv), e.g. agg-router.']);
  });

  it('one expected worker and no ids: no random-level line for a single worker', () => {
    const v = judge(stats({ hits: 40, hitRate: 0.67, workerIdsReported: false, workers: [], affinity: null }), { routerMode: 'kv', workersExpected: 1 });
    expect(v.details.some((d) => d.startsWith('Random routing'))).toBe(false);
  });

  it('the random level is quoted only for more than one worker; the expected count stands in when ids are missing', () => {
    const v = judge(stats({ hits: 40, hitRate: 0.67, workerIdsReported: false, workers: [], affinity: null }), { routerMode: 'kv', workersExpected: 3 });
    expect(v.details).toContain('Random routing over 3 workers would hit about 81% of repeats if every worker could keep every prefix, less when caches evict (measured: 62-73% with two workers).');
    const none = judge(stats({ hits: 40, hitRate: 0.67, workerIdsReported: false, workers: [], affinity: null }), { routerMode: 'kv' });
    expect(none.details.some((d) => d.startsWith('Random routing'))).toBe(false);
  });
});

describe('judge: one worker', () => {
  it('one worker seen: inconclusive whatever the hits, with the recipe to use', () => {
    const v = judge(stats({ workers: ['w1'] }));
    expect(v).toEqual({
      code: 'inconclusive',
      summary: 'one worker served every request: prefix routing cannot be judged with a single worker',
      details: [
        '60 of 60 repeats hit the prefix cache (100%, judged by cached_tokens)',
        'With one worker every repeat lands where its prefix is cached, whatever the router does.',
        'Use a recipe with two or more workers that cache prompts behind the KV router, e.g. agg-router.',
      ],
      next: 'dynamo-dev up agg-router',
    });
  });

  it("one worker seen of the run's two: inconclusive, naming the idle worker and more prefixes as the next step, never 'use a recipe with two workers'", () => {
    // The real KV router breaks ties between idle workers at random: 8 cold prefixes sent one at a
    // time all land on one of two workers once in 128 probes (seen in CI, 2026-12-02).
    const v = judge(stats({ sends: 32, ok: 32, repeatsJudged: 24, hits: 24, workers: ['9096055557826341954'] }), { workersExpected: 2, routerMode: 'kv', prefixes: 8 });
    expect(v).toEqual({
      code: 'inconclusive',
      summary: "every request went to one of the run's 2 workers: routing between workers was not tested",
      details: [
        '24 of 24 repeats hit the prefix cache (100%, judged by cached_tokens)',
        'Worker 9096055557826341954 answered all 32 requests; the other worker answered none.',
        'The KV router picks at random between idle workers, so a few cold prefixes sent one at a time can all land on one worker; more prefixes spread them.',
        'If more prefixes still reach one worker, the router may not see the others; the workers it knows: `dynamo-dev logs frontend | grep "Adding worker"`',
      ],
      next: 'dynamo-dev probe --prefixes 16',
    });
    expect(verdictExitCode(v)).toBe(0);
    // Three expected, a round-robin router (no random ties to blame), 12 prefixes asked.
    const rr = judge(stats({ workers: ['w1'] }), { workersExpected: 3, routerMode: 'round-robin', prefixes: 12 });
    expect(rr.summary).toBe("every request went to one of the run's 3 workers: routing between workers was not tested");
    expect(rr.details).toEqual([
      '60 of 60 repeats hit the prefix cache (100%, judged by cached_tokens)',
      'Worker w1 answered all 72 requests; the other 2 workers answered none.',
      'If more prefixes still reach one worker, the router may not see the others; the workers it knows: `dynamo-dev logs frontend | grep "Adding worker"`',
    ]);
    expect(rr.next).toBe('dynamo-dev probe --prefixes 24');
    // One expected is the single-worker case; two workers seen of two is judged as usual.
    expect(judge(stats({ workers: ['w1'] }), { workersExpected: 1 }).next).toBe('dynamo-dev up agg-router');
    expect(judge(stats(), { workersExpected: 2 }).code).toBe('works');
  });

  it("one worker of the run's two whose cache cannot hold the prefixes: the eviction line too", () => {
    const v = judge(stats({ workers: ['w1'] }), { workersExpected: 2, kvTokensMin: 5000, prefixes: 12, prefixTokens: 1500 });
    expect(v.details[1]).toMatch(/^Eviction: 12 prefixes of ~1,500 tokens/);
    expect(v.details[2]).toBe('Worker w1 answered all 72 requests; the other worker answered none.');
  });

  it('one worker seen though some answers lacked an id: still a single worker', () => {
    expect(judge(stats({ workers: ['w1'], workerIdsReported: false })).summary).toBe('one worker served every request: prefix routing cannot be judged with a single worker');
  });

  it('one worker expected but no ids reported is not called a single worker: judged on hits', () => {
    const v = judge(stats({ workerIdsReported: false, workers: [], affinity: null }), { workersExpected: 1 });
    expect(v.code).toBe('works');
  });

  it("one worker whose cache cannot hold the prefixes says so instead", () => {
    const v = judge(stats({ workers: ['w1'] }), { kvTokensMin: 5000, prefixes: 12, prefixTokens: 1500 });
    expect(v.details[1]).toBe(
      "Eviction: 12 prefixes of ~1,500 tokens are ~18,000 tokens; the worker's KV cache holds 5,000, so prefixes are evicted before their repeats arrive and misses say nothing about routing. At most ~3 such prefixes fit.",
    );
  });
});

describe('judge and evictionNote: prefixes that do not fit', () => {
  const ctx = { kvTokensMin: 5000, prefixes: 12, prefixTokens: 1500 };
  it('misses under eviction are blamed on the cache, with a --prefixes that fits', () => {
    const v = judge(stats({ hits: 30, hitRate: 0.5, affinity: 0.5 }), ctx);
    expect(v).toEqual({
      code: 'inconclusive',
      summary: "the prefixes do not fit the workers' KV caches (50% hit): eviction, not routing, explains the misses",
      details: [
        '30 of 60 repeats hit the prefix cache (50%, judged by cached_tokens)',
        'Eviction: 12 prefixes of ~1,500 tokens are ~18,000 tokens; even perfectly split over 2 workers, each holds ~9,000 tokens, but its KV cache holds 5,000, so prefixes are evicted before their repeats arrive and misses say nothing about routing. At most ~6 such prefixes fit.',
      ],
      next: 'dynamo-dev probe --prefixes 6',
    });
  });

  it('a high hit rate despite eviction is judged as usual, from exactly 80% on', () => {
    expect(judge(stats(), ctx).code).toBe('works');
    expect(judge(stats({ hits: 48, hitRate: 0.8, affinity: 1 }), ctx).code).toBe('works');
  });

  it("a worker's share exactly its KV cache fits; one token less does not", () => {
    expect(evictionNote({ kvTokensMin: 9000, prefixes: 12, prefixTokens: 1500 }, 2)).toBeNull();
    expect(evictionNote({ kvTokensMin: 8999, prefixes: 12, prefixTokens: 1500 }, 2)?.fitPrefixes).toBe(10);
  });

  it('a cache smaller than one prefix still suggests one prefix; unknown numbers say nothing', () => {
    expect(evictionNote({ kvTokensMin: 100, prefixes: 12, prefixTokens: 1500 }, null)?.fitPrefixes).toBe(1);
    expect(evictionNote({ kvTokensMin: null, prefixes: 12, prefixTokens: 1500 }, 2)).toBeNull();
    expect(evictionNote({ kvTokensMin: 100, prefixes: 12, prefixTokens: null }, 2)).toBeNull();
    expect(evictionNote({ kvTokensMin: 100, prefixTokens: 1500 }, 2)).toBeNull();
    expect(evictionNote({ kvTokensMin: 100, prefixes: 12, prefixTokens: 0 }, 2)).toBeNull();
    expect(evictionNote({ kvTokensMin: 100, prefixes: 12, prefixTokens: 1500 }, 0)?.line).toContain("the worker's KV cache holds 100");
  });
});

describe('judge: workers that cache nothing', () => {
  const spread = { hits: 0, hitRate: 0, firstRepeatHits: 0, firstRepeatHitRate: 0, affinity: 0.5, meanWorkersPerPrefix: 2 };
  const NO_CACHE = 'no repeat hit the cache, not even the 4 on a worker that had served their prefix, and repeats spread over workers like random routing: the workers cache no prefixes, and the router gets no KV events from them (check kv.events)';
  it(`no hit among exactly ${MIN_JUDGED_REPEATS} repeats back on a worker that had served their prefix: the workers keep no cache, with the caching fix`, () => {
    const v = judge(stats({ ...spread, warmRepeats: MIN_JUDGED_REPEATS, warmHits: 0 }), { routerMode: 'kv' });
    expect(v.code).toBe('random-level');
    expect(v.summary).toBe(NO_CACHE);
    expect(v.details).toEqual([
      '0 of 60 repeats hit the prefix cache (0%, judged by cached_tokens)',
      AFFINE('50%', '2.0'),
      '0 of 4 repeats sent to a worker that had served their prefix before hit its cache: the workers keep no prefix cache (prefix caching switched off, e.g. --no-enable-prefix-caching, or a KV cache smaller than one prefix), so no router could get hits; workers that cache nothing publish no KV events either, and the KV router routes by load.',
      RANDOM_2,
      'Fix: turn prefix caching on for the workers (drop --no-enable-prefix-caching); vLLM workers also need --kv-events-config with "enable_kv_cache_events": true.',
    ]);
    expect(v.next).toBe(KV_EVENTS_NEXT);
    expect(verdictExitCode(v)).toBe(1);
  });

  it('one such repeat fewer, or one of them hitting, or no cached_tokens: the usual random level with the events cause', () => {
    for (const o of [{ warmRepeats: MIN_JUDGED_REPEATS - 1, warmHits: 0 }, { warmRepeats: 10, warmHits: 1, hits: 1, hitRate: 1 / 60 }]) {
      const v = judge(stats({ ...spread, ...o }), { routerMode: 'kv' });
      expect(v.summary).toBe('hit rate at random level: the router is not using KV events (check kv.events)');
      expect(v.details).toContain(EVENTS_CAUSE);
      expect(v.details).toContain(EVENTS_FIX);
    }
    const unknown = judge(stats({ ...spread, hits: 0, hitRate: null, method: null, warmRepeats: 0, warmHits: 0 }), { routerMode: 'kv' });
    expect(unknown.summary).toBe("repeats spread over workers like random routing (50% went back to their prefix's worker): the router is not using KV events (check kv.events)");
  });

  it('a router that ignores prefixes over workers that cache nothing: both said, the router named as the cause', () => {
    const v = judge(stats({ ...spread, warmRepeats: 30, warmHits: 0 }), { routerMode: 'random', engine: 'mocker' });
    expect(v.summary).toBe('no repeat hit the cache, not even the 30 on a worker that had served their prefix, and repeats spread over workers like random routing: the run routes with --router-mode random, which ignores prefixes');
    expect(v.details.join('\n')).toContain('the workers keep no prefix cache');
    expect(v.next).toBe('dynamo-dev up mocker');
  });
});
