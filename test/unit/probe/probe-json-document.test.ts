import { describe, expect, it } from 'vitest';
import { probeDocument } from '../../../src/probe/document.js';
import { summarize, type ProbeSend } from '../../../src/probe/stats.js';
import { judge } from '../../../src/probe/verdict.js';

// The `probe --json` document scripts read: rates to 4 decimals, times to 2, each send without the
// prompt builder's word counts.
const send = (prefix: number, repeat: number, o: Partial<ProbeSend> = {}): ProbeSend => ({
  prefix, repeat, ok: true, error: null, ttftMs: 40.123456, totalMs: 50.987654, cachedTokens: repeat ? 1000 : 0, promptTokens: 1000,
  workerId: ['a', 'b', 'c'][(prefix + repeat) % 3], prefixWords: 1000, tailWords: 0, ...o,
});

describe('probeDocument', () => {
  it('rounds what it reports and keeps the rest as measured', () => {
    const sends = [send(0, 0), send(0, 1), send(0, 2, { cachedTokens: 0 }), send(1, 0), send(1, 1)];
    const stats = summarize(sends);
    const verdict = judge(stats);
    const settings = { prefixes: 2, repeats: 3, prefixTokens: 1000, seed: 7, maxTokens: 1, timeoutSeconds: 30 };
    const doc = probeDocument({ url: 'http://x', model: 'm', settings, durationMs: 1234.56, sends, stats, verdict, notes: ['n'] });
    expect(doc).toMatchObject({
      url: 'http://x', model: 'm', settings, durationMs: 1235,
      requests: { sent: 5, ok: 5, failed: 0 },
      hitRate: 0.6667, hits: 2, repeatsJudged: 3, method: 'cached_tokens', firstRepeatHitRate: 1,
      randomHitRate: 0.4444, workers: ['a', 'b', 'c'], workerIdsReported: true, meanWorkersPerPrefix: 2.5,
      affinity: 0, randomAffinity: 0.3333,
      ttft: { firstMedianMs: 40.12, repeatMedianMs: 40.12, hitMedianMs: 40.12, missMedianMs: 40.12 },
      verdict, notes: ['n'],
    });
    expect(doc.prefixes[0]).toEqual({ prefix: 0, workers: ['a', 'b', 'c'], repeats: 2, hits: 1, cachedTokens: [0, 1000, 0], ttftMs: [40.12, 40.12, 40.12] });
    expect(doc.sends[0]).toEqual({ prefix: 0, repeat: 0, ok: true, error: null, ttftMs: 40.12, totalMs: 50.99, cachedTokens: 0, promptTokens: 1000, workerId: 'a' });
  });

  it('unknown numbers stay null, never 0', () => {
    const sends = [send(0, 0, { ok: false, error: 'x', ttftMs: null, totalMs: null, workerId: null })];
    const stats = summarize(sends);
    const doc = probeDocument({ url: 'u', model: 'm', settings: { prefixes: 1, repeats: 1, prefixTokens: 1, seed: 1, maxTokens: 1, timeoutSeconds: 1 }, durationMs: 0, sends, stats, verdict: judge(stats), notes: [] });
    expect(doc).toMatchObject({ hitRate: null, firstRepeatHitRate: null, randomHitRate: null, meanWorkersPerPrefix: null, affinity: null, randomAffinity: null });
    expect(doc.ttft).toEqual({ firstMedianMs: null, repeatMedianMs: null, hitMedianMs: null, missMedianMs: null });
    expect(doc.sends[0]).toMatchObject({ ttftMs: null, totalMs: null });
    expect(doc.prefixes[0].ttftMs).toEqual([null]);
  });
});
