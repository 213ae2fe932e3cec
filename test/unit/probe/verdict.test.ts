import { describe, expect, it } from 'vitest';
import { summarize, type ProbeSend } from '../../../src/probe/stats.js';
import { evictionNote, judge, verdictExitCode, KV_EVENTS_NEXT } from '../../../src/probe/verdict.js';

// Runs shaped like FACTS §7: 12 prefixes x 6 sends = 60 repeats over two workers.

function run(o: { hitsOf60: number; sticky: boolean; workers?: string[]; cached?: boolean; prefixes?: number; repeats?: number }): ProbeSend[] {
  const workers = o.workers ?? ['7587888512394541', '7587888512394542'];
  const prefixes = o.prefixes ?? 12;
  const repeats = o.repeats ?? 6;
  const sends: ProbeSend[] = [];
  let hitsLeft = o.hitsOf60;
  for (let r = 0; r < repeats; r++) {
    for (let p = 0; p < prefixes; p++) {
      const hit = r > 0 && hitsLeft-- > 0;
      const worker = o.sticky ? workers[p % workers.length] : workers[(p + r) % workers.length];
      sends.push({
        prefix: p, repeat: r, ok: true, error: null,
        ttftMs: hit ? 15 : 45, totalMs: 60,
        cachedTokens: o.cached === false ? null : hit ? 1488 : 0,
        promptTokens: 1520, workerId: worker, prefixWords: 1500, tailWords: 17,
      });
    }
  }
  return sends;
}

describe('judge', () => {
  it('KV routing with events at its measured worst (53 of 60, sticky): works, exit 0', () => {
    const v = judge(summarize(run({ hitsOf60: 53, sticky: true })));
    expect(v.code).toBe('works');
    expect(v.summary).toMatch(/prefix routing works/);
    expect(v.next).toBeNull();
    expect(verdictExitCode(v)).toBe(0);
  });

  it('events on but not published at its measured best (44 of 60, not sticky): random level naming kv.events, exit 1', () => {
    const v = judge(summarize(run({ hitsOf60: 44, sticky: false })));
    expect(v.code).toBe('random-level');
    expect(v.summary).toMatch(/random level.*kv\.events/);
    expect(v.details.join(' ')).toMatch(/kv_event_publisher_disabled/);
    expect(v.details.join(' ')).toMatch(/enable_kv_cache_events/);
    expect(v.next).toBe(KV_EVENTS_NEXT);
    expect(verdictExitCode(v)).toBe(1);
  });

  it('round-robin at its measured best (43 of 60) is random level too', () => {
    expect(judge(summarize(run({ hitsOf60: 43, sticky: false }))).code).toBe('random-level');
  });

  it('without worker ids, the hit rate alone decides', () => {
    const strip = (s: ProbeSend[]) => s.map((x) => ({ ...x, workerId: null }));
    expect(judge(summarize(strip(run({ hitsOf60: 53, sticky: true })))).code).toBe('works');
    expect(judge(summarize(strip(run({ hitsOf60: 44, sticky: true })))).code).toBe('random-level');
  });

  it('a high hit rate with prefixes spread over workers is still random routing (caches that hold everything)', () => {
    const v = judge(summarize(run({ hitsOf60: 50, sticky: false })));
    expect(v.code).toBe('random-level');
    expect(v.details.join(' ')).toMatch(/caches large enough/);
  });

  it('sticky routing whose repeats miss points at the KV cache size, not at the router', () => {
    const v = judge(summarize(run({ hitsOf60: 20, sticky: true })));
    expect(v.code).toBe('inconclusive');
    expect(v.next).toBe('dynamo-dev doctor --only kv.allocated');
    expect(verdictExitCode(v)).toBe(0);
  });

  it('a single worker cannot judge routing', () => {
    const v = judge(summarize(run({ hitsOf60: 60, sticky: true, workers: ['1'] })));
    expect(v.code).toBe('inconclusive');
    expect(v.summary).toMatch(/single worker/);
    expect(v.next).toBe('dynamo-dev up agg-router');
  });

  it('too few judged repeats is inconclusive', () => {
    const v = judge(summarize(run({ hitsOf60: 0, sticky: false, prefixes: 1, repeats: 3 })));
    expect(v.code).toBe('inconclusive');
    expect(v.summary).toMatch(/too few repeats/);
  });

  it('a run whose router ignores prefixes by design is told to use a KV recipe, not to check events', () => {
    const v = judge(summarize(run({ hitsOf60: 40, sticky: false })), { routerMode: 'round-robin' });
    expect(v.code).toBe('random-level');
    expect(v.summary).toMatch(/round-robin/);
    expect(v.next).toBe('dynamo-dev up agg-router');
  });

  it('with no run to tell the router mode (--url), random level also names a router that ignores prefixes; with the run\'s kv mode it does not', () => {
    const hint = /does not run --router-mode kv \(round-robin and random ignore prefixes\)/;
    const bare = judge(summarize(run({ hitsOf60: 40, sticky: false })));
    expect(bare.summary).toMatch(/kv\.events/);
    expect(bare.details.join(' ')).toMatch(hint);
    expect(judge(summarize(run({ hitsOf60: 40, sticky: false })), { routerMode: 'kv' }).details.join(' ')).not.toMatch(hint);
  });

  it('without cached_tokens: judged by worker identity, never by first-token time', () => {
    const v = judge(summarize(run({ hitsOf60: 58, sticky: true, cached: false })));
    expect(v.code).toBe('works');
    expect(v.details[0]).toBe('100% of 60 repeats went back to the worker that served their prefix first (a router that ignores prefixes: 50%)');
    expect(v.details[1]).toMatch(/^Hit rate unknown: the frontend reported no cached_tokens/);
    expect(judge(summarize(run({ hitsOf60: 58, sticky: false, cached: false }))).code).toBe('random-level');
  });
});

describe('eviction: prefixes that do not fit the measured KV cache', () => {
  it('one worker, 12 prefixes of ~2,370 tokens against 14,816 KV tokens: the 20% is eviction, said with those numbers', () => {
    const v = judge(summarize(run({ hitsOf60: 12, sticky: true, workers: ['only'] })), { workersExpected: 1, kvTokensMin: 14_816, prefixes: 12, prefixTokens: 2370 });
    expect(v.code).toBe('inconclusive');
    const text = v.details.join(' ');
    expect(text).toContain('12 prefixes of ~2,370 tokens are ~28,440 tokens');
    expect(text).toContain('KV cache holds 14,816');
    expect(text).not.toContain('every repeat lands where its prefix is cached');
    expect(v.next).toBe('dynamo-dev up agg-router');
  });

  it('two workers whose share does not fit: inconclusive (not "random level"), with a --prefixes that fits', () => {
    const v = judge(summarize(run({ hitsOf60: 30, sticky: false })), { workersExpected: 2, routerMode: 'kv', kvTokensMin: 14_816, prefixes: 12, prefixTokens: 4000 });
    expect(v.code).toBe('inconclusive');
    expect(v.summary).toMatch(/do not fit the workers' KV caches \(50% hit\): eviction, not routing/);
    expect(v.next).toBe('dynamo-dev probe --prefixes 6');
    expect(verdictExitCode(v)).toBe(0);
  });

  it('exactly fitting is no eviction; one token more per prefix is', () => {
    // 12 prefixes over 2 workers: 6 each; 6 x 2,469 = 14,814 <= 14,816.
    expect(evictionNote({ kvTokensMin: 14_816, prefixes: 12, prefixTokens: 2469 }, 2)).toBeNull();
    expect(evictionNote({ kvTokensMin: 14_816, prefixes: 12, prefixTokens: 2470 }, 2)).not.toBeNull();
    expect(evictionNote({ kvTokensMin: null, prefixes: 12, prefixTokens: 9999 }, 2)).toBeNull();
  });
});

