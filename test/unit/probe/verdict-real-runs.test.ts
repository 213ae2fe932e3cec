import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildPrompts } from '../../../src/probe/prompts.js';
import { summarize, type ProbeSend } from '../../../src/probe/stats.js';
import { judge, verdictExitCode, KV_EVENTS_NEXT, type VerdictContext } from '../../../src/probe/verdict.js';

// Probes of the real Dynamo 1.6.1 and 1.4.2 frontends in front of two real mockers (the recorded
// --json documents, test/fixtures/samples/probe; each file says how the run was started), judged
// again by today's code. The truth of each was read from the run's logs: the router's decisions
// ('Selected worker ... worker_id=N', 1.4.2 also 'overlap_blocks=N') and each mocker's own id.

interface Recorded {
  settings: { prefixes: number; repeats: number; prefixTokens: number; seed: number; tag: string; blockSize: number };
  sends: Omit<ProbeSend, 'prefixWords' | 'tailWords'>[];
}

function judged(name: string, ctx: VerdictContext) {
  const doc = JSON.parse(readFileSync(new URL(`../../fixtures/samples/probe/${name}.json`, import.meta.url), 'utf8')) as Recorded;
  // The words of each send, rebuilt from the run's seed and tag as probe built them.
  const prompts = buildPrompts(doc.settings);
  const sends: ProbeSend[] = doc.sends.map((s) => ({ ...s, prefixWords: prompts.prefixWords, tailWords: prompts.tailWords(s.prefix, s.repeat) }));
  const stats = summarize(sends, { blockSize: doc.settings.blockSize });
  return { stats, verdict: judge(stats, { prefixes: doc.settings.prefixes, prefixTokens: doc.settings.prefixTokens, ...ctx }) };
}

const MOCKER_RUN = { engine: 'mocker', routerMode: 'kv', workersExpected: 2 } as const;

describe('probe verdicts of real runs', () => {
  it('1.6.1, workers without prefix caching: 0 of 60 hit, not even the repeats back on a worker that served their prefix: said so, with the caching fix, not "hit rate at random level" (it is far below it)', () => {
    const { stats, verdict } = judged('1.6.1-mocker-no-prefix-caching', { ...MOCKER_RUN, dynamoVersion: '1.6.1' });
    expect(stats.hits).toBe(0);
    // Repeats the router sent back to a worker that already had served the prefix: 48 of 60 here.
    expect(stats.warmRepeats).toBe(48);
    expect(verdict.code).toBe('random-level');
    expect(verdict.summary).toBe('no repeat hit the cache, not even the 48 on a worker that had served their prefix, and repeats spread over workers like random routing: the workers cache no prefixes, and the router gets no KV events from them (check kv.events)');
    expect(verdict.summary).not.toContain('hit rate at random level');
    const text = verdict.details.join('\n');
    expect(text).toContain('0 of 48 repeats sent to a worker that had served their prefix before hit its cache: the workers keep no prefix cache (prefix caching switched off, e.g. --no-enable-prefix-caching');
    expect(text).toContain('Fix: turn prefix caching on for the workers (drop --no-enable-prefix-caching)');
    // Events alone would not fix it: that advice is not given.
    expect(text).not.toContain('--no-router-kv-events');
    expect(verdict.next).toBe(KV_EVENTS_NEXT);
    expect(verdictExitCode(verdict)).toBe(1);
  });

  it('1.6.1, random router over caches that never evict: 50 of 60 hit (above the 80% cut), affinity 70% tells random routing; a mocker run is pointed at the mocker recipe, not at agg-router (vLLM, a GPU)', () => {
    const { stats, verdict } = judged('1.6.1-mocker-random-router', { ...MOCKER_RUN, routerMode: 'random', dynamoVersion: '1.6.1' });
    expect(stats.hits).toBe(50);
    expect(stats.affinity).toBeCloseTo(0.7, 5);
    expect(verdict.code).toBe('random-level');
    expect(verdict.summary).toBe('hit rate at random level: the run routes with --router-mode random, which ignores prefixes');
    expect(verdict.details.join('\n')).toContain('the hits come from caches large enough to hold every prefix on every worker, not from the router');
    expect(verdict.details.at(-1)).toBe('Use a recipe with the KV router (frontend.routerMode: kv), e.g. mocker.');
    expect(verdict.next).toBe('dynamo-dev up mocker');
    // The same numbers from a vLLM run keep agg-router.
    expect(judged('1.6.1-mocker-random-router', { routerMode: 'random', engine: 'vllm' }).verdict.next).toBe('dynamo-dev up agg-router');
  });

  it('1.6.1 and 1.4.2, the KV router: works; 1.4.2 by worker identity with the hit rate unknown', () => {
    const v161 = judged('1.6.1-mocker-kv', { ...MOCKER_RUN, dynamoVersion: '1.6.1' });
    expect(v161.stats.hits).toBe(60);
    expect(v161.verdict.summary).toBe('prefix routing works: 100% of repeats hit the cache');
    const v142 = judged('1.4.2-mocker-kv', { ...MOCKER_RUN, dynamoVersion: '1.4.2' });
    expect(v142.stats.hitRate).toBeNull();
    expect(v142.verdict.code).toBe('works');
    expect(v142.verdict.summary).toBe("prefix routing works: 100% of repeats went back to their prefix's worker (cache hits unknown: no cached_tokens)");
    expect(v142.verdict.details).toContain("Hit rate unknown: Dynamo 1.4.2's frontend does not report cached_tokens (1.5.0 and newer do), and first-token time does not tell a hit from a miss.");
  });
});
