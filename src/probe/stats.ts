// Statistics of a probe run (pure). Definitions, also in docs/probe.md:
//
// - A "repeat" is any send of a prefix after its first (the first send is a cold miss by design).
// - A repeat HITS when cached_tokens >= HIT_CACHED_FRACTION x the prefix's cacheable tokens. The
//   prefix's tokens are estimated from the reported prompt_tokens, scaled by the prefix's share of
//   the prompt's words (so the chat template and the real tokenizer are accounted for); without
//   prompt_tokens, the prefix's word count. Engines cache whole blocks (vLLM 16 tokens, Dynamo's
//   mocker 64, FACTS §4): with the workers' block size known, the cacheable part is the prefix
//   rounded down to whole blocks (at least one), so a short prefix on 64-token blocks is not
//   called a miss for the up to 63 tokens no engine could reuse. 80% of that tolerates tokenizer
//   drift while a partial hit on a shared template start (a few tokens) never counts.
// - When cached_tokens is absent (Dynamo 1.3 and 1.4 frontends never report it:
//   plan/dynamo-releases.ts cachedTokens), the repeat is not judged: first-token time does not
//   tell a hit from a miss (on the mocker, a cut at 0.7 x the first send's time called real hits
//   misses on 4 of 7 runs, issue 25). Routing is then judged by worker identity alone (affinity).
// - Workers per prefix: distinct worker ids that served a prefix (nvext.worker_id).
// - Affinity: share of repeats served by the worker that served the prefix's first send.
// - Random level: what a router that ignores prefixes achieves with N workers, when every worker
//   can keep every prefix: repeat k (k = 1..R-1) hits if any of the k earlier sends went to the
//   worker it lands on, probability 1 - (1 - 1/N)^k. Evictions only lower it (FACTS §7 measured
//   37-44 of 60 = 62-73% with two workers, below the 81% this formula gives).

export const HIT_CACHED_FRACTION = 0.8;

export interface ProbeSend {
  prefix: number;
  /** 0 = first send. */
  repeat: number;
  ok: boolean;
  error: string | null;
  ttftMs: number | null;
  totalMs: number | null;
  cachedTokens: number | null;
  promptTokens: number | null;
  workerId: string | null;
  /** Words of the prefix and of this send's tail (from the prompt builder). */
  prefixWords: number;
  tailWords: number;
}

export type HitMethod = 'cached_tokens' | 'ttft';

export interface RepeatJudgement {
  prefix: number;
  repeat: number;
  hit: boolean;
  method: HitMethod;
}

export interface PrefixSummary {
  prefix: number;
  /** Distinct workers that served it, in order of first appearance. */
  workers: string[];
  repeats: number;
  hits: number;
  /** Per send, in repeat order: cached tokens and first-token times (null when failed/absent). */
  cachedTokens: (number | null)[];
  ttftMs: (number | null)[];
}

export interface ProbeStats {
  sends: number;
  ok: number;
  failed: number;
  /** Repeats that answered and could be judged. */
  repeatsJudged: number;
  hits: number;
  /** hits / repeatsJudged; null when nothing could be judged. */
  hitRate: number | null;
  firstRepeatJudged: number;
  firstRepeatHits: number;
  firstRepeatHitRate: number | null;
  /** How hits were judged: cached_tokens everywhere, TTFT everywhere, or both. */
  method: HitMethod | 'mixed' | null;
  /** Every send that answered reported a worker id. */
  workerIdsReported: boolean;
  /** Distinct workers seen across the run. */
  workers: string[];
  meanWorkersPerPrefix: number | null;
  affinity: number | null;
  /** Expected hit rate of repeats for a router that ignores prefixes, over workers.length workers. */
  randomHitRate: number | null;
  /** Repeats whose worker and whose prefix's first worker are both known (what affinity is over). */
  affinityJudged: number;
  /** Expected affinity of such a router: 1 / workers. */
  randomAffinity: number | null;
  /**
   * Repeats judged by cached_tokens that landed on a worker which had served an earlier send of
   * their prefix (its cache had the prefix), and how many of them hit. None hitting says the
   * workers keep no prefix cache, whatever the router does.
   */
  warmRepeats: number;
  warmHits: number;
  ttft: {
    firstMedianMs: number | null;
    repeatMedianMs: number | null;
    hitMedianMs: number | null;
    missMedianMs: number | null;
  };
  perPrefix: PrefixSummary[];
  judgements: RepeatJudgement[];
}

export function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Expected hit rate of repeats 1..repeats-1 when each send picks one of `workers` at random. */
export function randomLevelHitRate(workers: number, repeats: number): number | null {
  if (workers < 1 || repeats < 2) return null;
  let sum = 0;
  for (let k = 1; k < repeats; k++) sum += 1 - (1 - 1 / workers) ** k;
  return sum / (repeats - 1);
}

/** The prefix's share of this send's prompt, in tokens. */
export function estimatedPrefixTokens(s: Pick<ProbeSend, 'promptTokens' | 'prefixWords' | 'tailWords'>): number {
  if (s.promptTokens !== null && s.prefixWords + s.tailWords > 0) {
    return (s.promptTokens * s.prefixWords) / (s.prefixWords + s.tailWords);
  }
  return s.prefixWords;
}

/** Cached tokens a repeat needs to count as a hit; blockSize null: the prefix's tokens as they are. */
export function hitThreshold(prefixTokens: number, blockSize: number | null): number {
  if (!blockSize || blockSize <= 1) return HIT_CACHED_FRACTION * prefixTokens;
  return HIT_CACHED_FRACTION * Math.max(blockSize, Math.floor(prefixTokens / blockSize) * blockSize);
}

export function summarize(sends: ProbeSend[], o: { blockSize?: number | null } = {}): ProbeStats {
  const blockSize = o.blockSize ?? null;
  const ok = sends.filter((s) => s.ok);
  const byPrefix = new Map<number, ProbeSend[]>();
  for (const s of sends) {
    const list = byPrefix.get(s.prefix) ?? [];
    list.push(s);
    byPrefix.set(s.prefix, list);
  }
  for (const list of byPrefix.values()) list.sort((a, b) => a.repeat - b.repeat);

  const firstTtfts = ok.filter((s) => s.repeat === 0 && s.ttftMs !== null).map((s) => s.ttftMs as number);
  const firstMedian = median(firstTtfts);

  const judgements: RepeatJudgement[] = [];
  const perPrefix: PrefixSummary[] = [];
  let affine = 0;
  let affineJudged = 0;
  let warmRepeats = 0;
  let warmHits = 0;
  const hitTtfts: number[] = [];
  const missTtfts: number[] = [];
  for (const [prefix, list] of [...byPrefix.entries()].sort((a, b) => a[0] - b[0])) {
    const first = list.find((s) => s.repeat === 0 && s.ok) ?? null;
    const workers: string[] = [];
    let hits = 0;
    let repeats = 0;
    for (const s of list) {
      if (s.ok && s.workerId !== null && !workers.includes(s.workerId)) workers.push(s.workerId);
      if (s.repeat === 0 || !s.ok) continue;
      let j: RepeatJudgement | null = null;
      if (s.cachedTokens !== null) {
        j = { prefix, repeat: s.repeat, method: 'cached_tokens', hit: s.cachedTokens >= hitThreshold(estimatedPrefixTokens(s), blockSize) };
      }
      if (j) {
        judgements.push(j);
        if (s.workerId !== null && list.some((e) => e.ok && e.repeat < s.repeat && e.workerId === s.workerId)) {
          warmRepeats++;
          if (j.hit) warmHits++;
        }
        repeats++;
        if (j.hit) hits++;
        if (s.ttftMs !== null) (j.hit ? hitTtfts : missTtfts).push(s.ttftMs);
      }
      if (first?.workerId != null && s.workerId !== null) {
        affineJudged++;
        if (s.workerId === first.workerId) affine++;
      }
    }
    perPrefix.push({
      prefix,
      workers,
      repeats,
      hits,
      cachedTokens: list.map((s) => (s.ok ? s.cachedTokens : null)),
      ttftMs: list.map((s) => (s.ok ? s.ttftMs : null)),
    });
  }

  const hits = judgements.filter((j) => j.hit).length;
  const firstRepeat = judgements.filter((j) => j.repeat === 1);
  const methods = new Set(judgements.map((j) => j.method));
  const workerIdsReported = ok.length > 0 && ok.every((s) => s.workerId !== null);
  const workers = [...new Set(ok.map((s) => s.workerId).filter((w): w is string => w !== null))];
  const prefixesWithWorkers = perPrefix.filter((p) => p.workers.length > 0);
  const maxRepeats = sends.reduce((m, s) => Math.max(m, s.repeat + 1), 0);
  return {
    sends: sends.length,
    ok: ok.length,
    failed: sends.length - ok.length,
    repeatsJudged: judgements.length,
    hits,
    hitRate: judgements.length ? hits / judgements.length : null,
    firstRepeatJudged: firstRepeat.length,
    firstRepeatHits: firstRepeat.filter((j) => j.hit).length,
    firstRepeatHitRate: firstRepeat.length ? firstRepeat.filter((j) => j.hit).length / firstRepeat.length : null,
    method: methods.size === 0 ? null : methods.size > 1 ? 'mixed' : [...methods][0],
    workerIdsReported,
    workers,
    meanWorkersPerPrefix: prefixesWithWorkers.length
      ? prefixesWithWorkers.reduce((a, p) => a + p.workers.length, 0) / prefixesWithWorkers.length
      : null,
    affinity: affineJudged ? affine / affineJudged : null,
    affinityJudged: affineJudged,
    randomHitRate: workers.length >= 1 ? randomLevelHitRate(workers.length, maxRepeats) : null,
    randomAffinity: workers.length >= 1 ? 1 / workers.length : null,
    warmRepeats,
    warmHits,
    ttft: {
      firstMedianMs: firstMedian,
      repeatMedianMs: median(ok.filter((s) => s.repeat > 0 && s.ttftMs !== null).map((s) => s.ttftMs as number)),
      hitMedianMs: median(hitTtfts),
      missMedianMs: median(missTtfts),
    },
    perPrefix,
    judgements,
  };
}
