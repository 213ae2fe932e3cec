import { releaseFor } from '../plan/dynamo-releases.js';
import type { ProbeStats } from './stats.js';

// The verdict of a probe (pure). Thresholds come from FACTS §7, measured on one GPU with two
// workers over 60 repeats: KV routing with events 53-60 hits (88-100%), round-robin 35-43
// (58-72%), events on but not published 37-44 (62-73%). WORKS_HIT_RATE = 80% sits in the gap,
// at least 4 repeats of 60 away from either side.
// Hit rate alone can mislead when every worker's cache holds every prefix: random routing over
// two workers then reaches ~81% (stats.ts randomLevelHitRate). So when the frontend reports
// worker ids, the verdict also asks whether repeats return to the prefix's worker (affinity):
// a prefix-aware router keeps ~100%, a router that ignores prefixes 1/N (50% for two workers);
// STICKY_AFFINITY = 80% splits those the same way.

export const WORKS_HIT_RATE = 0.8;
export const STICKY_AFFINITY = 0.8;
/** Fewer judged repeats than this say nothing (one miss would swing the rate by 25%). */
export const MIN_JUDGED_REPEATS = 4;

export type VerdictCode = 'works' | 'random-level' | 'inconclusive';

export interface Verdict {
  code: VerdictCode;
  /** One line. */
  summary: string;
  /** Evidence and explanation, one sentence per entry. */
  details: string[];
  /** The command to run next; null when there is nothing to fix. */
  next: string | null;
}

export interface VerdictContext {
  /** Workers of the live run that hold prompt caches (agg + prefill), when known from run.json. */
  workersExpected?: number | null;
  /** The run's --router-mode, when known. */
  routerMode?: string | null;
  /** The smallest KV cache (tokens) the run's caching workers logged, when known. */
  kvTokensMin?: number | null;
  /** The run's engine: kv.allocated reads vLLM's KV line, which the mocker does not write. */
  engine?: 'vllm' | 'mocker' | null;
  /** The run's Dynamo version: whether its frontend reports cached_tokens (plan/dynamo-releases.ts). */
  dynamoVersion?: string | null;
  /** Prefixes sent and their measured mean size in tokens. */
  prefixes?: number;
  prefixTokens?: number | null;
}

/**
 * When the prefixes cannot all stay cached (FACTS §7): even a perfect router gives each of the n
 * workers prefixes / n of them, and a worker whose share exceeds its KV cache evicts; then misses
 * say nothing about routing. Null when they fit or the numbers are unknown. Pure.
 */
export function evictionNote(ctx: VerdictContext, n: number | null): { line: string; fitPrefixes: number } | null {
  const kv = ctx.kvTokensMin ?? null;
  const tokens = ctx.prefixTokens ?? null;
  const prefixes = ctx.prefixes ?? null;
  if (kv === null || tokens === null || prefixes === null || tokens <= 0) return null;
  const workers = Math.max(1, n ?? 1);
  const perWorker = Math.ceil(prefixes / workers) * tokens;
  if (perWorker <= kv) return null;
  const fitPrefixes = Math.max(1, Math.floor(kv / tokens) * workers);
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
  return {
    line: `Eviction: ${prefixes} prefixes of ~${fmt(tokens)} tokens are ~${fmt(prefixes * tokens)} tokens; ` +
      `${workers === 1 ? 'the worker\'s' : `even perfectly split over ${workers} workers, each holds ~${fmt(perWorker)} tokens, but its`} KV cache holds ${fmt(kv)}, ` +
      `so prefixes are evicted before their repeats arrive and misses say nothing about routing. At most ~${fitPrefixes} such prefixes fit.`,
    fitPrefixes,
  };
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

export const KV_EVENTS_NEXT = 'dynamo-dev doctor --only kv.events';

/** Why no repeat could be judged by cached_tokens: the release, when it is known not to report it. */
function noCachedTokensLine(ctx: VerdictContext): string {
  const v = ctx.dynamoVersion ?? null;
  const release = v !== null && !releaseFor(v).facts.cachedTokens
    ? `Dynamo ${v}'s frontend does not report cached_tokens (1.5.0 and newer do)`
    : 'the frontend reported no cached_tokens';
  return `Hit rate unknown: ${release}, and first-token time does not tell a hit from a miss.`;
}

/**
 * The built-in recipe with two caching workers behind the KV router that fits the run: a mocker run
 * has no GPU to start agg-router's vLLM workers on, and the mocker recipe is that setup.
 */
const kvRecipe = (ctx: VerdictContext): string => (ctx.engine === 'mocker' ? 'mocker' : 'agg-router');

export function judge(stats: ProbeStats, ctx: VerdictContext = {}): Verdict {
  // Without cached_tokens the worker ids still show whether repeats return to their prefix's worker.
  const byWorkers = stats.hitRate === null && stats.affinity !== null && stats.affinityJudged >= MIN_JUDGED_REPEATS;
  if (!byWorkers && stats.ok > 0 && stats.hitRate === null && stats.failed === 0) {
    return {
      code: 'inconclusive',
      summary: 'hit rate unknown: the frontend reported neither cached_tokens nor worker ids, so routing cannot be judged',
      details: [noCachedTokensLine(ctx), 'Worker ids come from nvext.worker_id (Dynamo frontends report it when asked); a proxy in front of the frontend may drop it.'],
      next: null,
    };
  }
  if (!byWorkers && (stats.repeatsJudged < MIN_JUDGED_REPEATS || stats.hitRate === null)) {
    return {
      code: 'inconclusive',
      summary: `too few repeats answered to judge routing (${stats.repeatsJudged} judged, ${stats.failed} of ${stats.sends} requests failed)`,
      details: ['Routing is judged on the repeats of each prefix; raise --prefixes or --repeats, or look at why requests failed.'],
      next: stats.failed > 0 ? 'dynamo-dev logs frontend' : 'dynamo-dev probe --prefixes 12 --repeats 6',
    };
  }
  const n = stats.workers.length > 0 ? stats.workers.length : ctx.workersExpected ?? null;
  const hitLine = stats.hitRate === null
    ? noCachedTokensLine(ctx)
    : `${stats.hits} of ${stats.repeatsJudged} repeats hit the prefix cache (${pct(stats.hitRate)}, judged by ${stats.method === 'ttft' ? 'first-token time' : stats.method === 'mixed' ? 'cached_tokens and first-token time' : 'cached_tokens'})`;

  const evict = evictionNote(ctx, n);
  const expected = ctx.workersExpected ?? null;
  if (stats.workers.length === 1 && expected !== null && expected > 1) {
    // The run has several caching workers but the router used one. With requests sent one at a
    // time every worker is idle when a cold prefix arrives, so the KV router's costs tie and it
    // picks at random (minimum_cost_index, lib/kv-router/src/scheduling/selector/default.rs):
    // 8 cold prefixes all land on one of two workers once in 128 probes. More prefixes spread them.
    const others = expected - 1;
    return {
      code: 'inconclusive',
      summary: `every request went to one of the run's ${expected} workers: routing between workers was not tested`,
      details: [
        hitLine,
        ...(evict ? [evict.line] : []),
        `Worker ${stats.workers[0]} answered all ${stats.ok} requests; the other ${others === 1 ? 'worker' : `${others} workers`} answered none.`,
        ...(ctx.routerMode && ctx.routerMode !== 'kv'
          ? []
          : ['The KV router picks at random between idle workers, so a few cold prefixes sent one at a time can all land on one worker; more prefixes spread them.']),
        'If more prefixes still reach one worker, the router may not see the others; the workers it knows: `dynamo-dev logs frontend | grep "Adding worker"`',
      ],
      next: `dynamo-dev probe --prefixes ${Math.max(16, (ctx.prefixes ?? 8) * 2)}`,
    };
  }
  if (n === 1 && (stats.workerIdsReported || stats.workers.length === 1)) {
    return {
      code: 'inconclusive',
      summary: 'one worker served every request: prefix routing cannot be judged with a single worker',
      details: [
        hitLine,
        evict
          ? evict.line
          : 'With one worker every repeat lands where its prefix is cached, whatever the router does.',
        `Use a recipe with two or more workers that cache prompts behind the KV router, e.g. ${kvRecipe(ctx)}.`,
      ],
      next: `dynamo-dev up ${kvRecipe(ctx)}`,
    };
  }
  // Misses caused by a cache too small for the probe: say so instead of blaming the router.
  if (evict && stats.hitRate !== null && stats.hitRate < WORKS_HIT_RATE) {
    return {
      code: 'inconclusive',
      summary: `the prefixes do not fit the workers' KV caches (${pct(stats.hitRate)} hit): eviction, not routing, explains the misses`,
      details: [hitLine, evict.line],
      next: `dynamo-dev probe --prefixes ${evict.fitPrefixes}`,
    };
  }

  const sticky = stats.affinity === null ? null : stats.affinity >= STICKY_AFFINITY;
  if (stats.hitRate === null) {
    // Judged by worker identity alone: a repeat that lands on the worker that served its prefix is
    // where its prefix is cached (if the cache kept it); a router that ignores prefixes gets 1/N.
    const affinityLine = `${pct(stats.affinity!)} of ${stats.affinityJudged} repeats went back to the worker that served their prefix first (a router that ignores prefixes: ${stats.randomAffinity !== null ? pct(stats.randomAffinity) : '1/N'})`;
    if (sticky) {
      return {
        code: 'works',
        summary: `prefix routing works: ${pct(stats.affinity!)} of repeats went back to their prefix's worker (cache hits unknown: no cached_tokens)`,
        details: [affinityLine, hitLine, ...(evict ? [evict.line] : [])],
        next: null,
      };
    }
  }
  const highHits = stats.hitRate !== null && stats.hitRate >= WORKS_HIT_RATE;
  const affinityLine = stats.affinity === null
    ? null
    : `${pct(stats.affinity)} of repeats went back to the prefix's first worker (a router that ignores prefixes: ${stats.randomAffinity !== null ? pct(stats.randomAffinity) : '1/N'}); ${stats.meanWorkersPerPrefix?.toFixed(1)} workers per prefix on average`;
  const randomLine = stats.randomHitRate !== null && n !== null && n > 1
    ? `Random routing over ${n} workers would hit about ${pct(stats.randomHitRate)} of repeats if every worker could keep every prefix, less when caches evict (measured: 62-73% with two workers).`
    : null;
  const details = [hitLine, ...(affinityLine ? [affinityLine] : [])];

  if (highHits && sticky !== false) {
    return {
      code: 'works',
      summary: `prefix routing works: ${pct(stats.hitRate!)} of repeats hit the cache`,
      details: stats.workerIdsReported ? details : [...details, 'The frontend reported no worker ids, so workers per prefix are unknown.'],
      next: null,
    };
  }
  if (!highHits && sticky === true) {
    // kv.allocated reads vLLM's KV-size line and skips mocker workers: for the mocker, fewer prefixes
    // show whether its cache (--num-gpu-blocks-override x block size) was too small.
    const fewer = Math.max(2, Math.floor((ctx.prefixes ?? 12) / 2));
    return {
      code: 'inconclusive',
      summary: `repeats return to their prefix's worker but miss its cache (${pct(stats.hitRate!)} hit)`,
      details: [
        ...details,
        'Routing follows prefixes, so the misses come from the workers: a KV cache too small for --prefixes x --prefix-tokens, or prefix caching switched off.',
        ...(ctx.engine === 'mocker' ? [`The mocker logs no KV cache size for kv.allocated to read; a probe with fewer prefixes (--prefixes ${fewer}) tells a cache too small from caching switched off.`] : []),
      ],
      next: ctx.engine === 'mocker' ? `dynamo-dev probe --prefixes ${fewer}` : 'dynamo-dev doctor --only kv.allocated',
    };
  }

  // Routing at random level.
  // No hit even where a worker had served the prefix before: the workers keep no prefix cache, so
  // the hit rate is below any router's (the real mockers with --no-enable-prefix-caching: 0 of 60,
  // about 30 of them on such a worker, on Dynamo 1.6.1; they then publish no KV events either).
  const noCache = stats.hitRate !== null && stats.warmRepeats >= MIN_JUDGED_REPEATS && stats.warmHits === 0;
  const randomWhat = stats.hitRate === null
    ? `repeats spread over workers like random routing (${pct(stats.affinity!)} went back to their prefix's worker)`
    : noCache
      ? `no repeat hit the cache, not even the ${stats.warmRepeats} on a worker that had served their prefix, and repeats spread over workers like random routing`
      : 'hit rate at random level';
  const why = highHits
    ? [`Repeats are spread over workers like random routing; the hits come from caches large enough to hold every prefix on every worker, not from the router.`]
    : noCache
      ? [`${stats.warmHits} of ${stats.warmRepeats} repeats sent to a worker that had served their prefix before hit its cache: the workers keep no prefix cache (prefix caching switched off, e.g. --no-enable-prefix-caching, or a KV cache smaller than one prefix), so no router could get hits; workers that cache nothing publish no KV events either, and the KV router routes by load.`]
      : [];
  if (ctx.routerMode && ctx.routerMode !== 'kv') {
    return {
      code: 'random-level',
      summary: `${randomWhat}: the run routes with --router-mode ${ctx.routerMode}, which ignores prefixes`,
      details: [...details, ...why, ...(randomLine ? [randomLine] : []), `Use a recipe with the KV router (frontend.routerMode: kv), e.g. ${kvRecipe(ctx)}.`],
      next: `dynamo-dev up ${kvRecipe(ctx)}`,
    };
  }
  return {
    code: 'random-level',
    summary: noCache
      ? `${randomWhat}: the workers cache no prefixes, and the router gets no KV events from them (check kv.events)`
      : `${randomWhat}: the router is not using KV events (check kv.events)`,
    details: [
      ...details,
      ...why,
      ...(randomLine ? [randomLine] : []),
      ...(noCache
        ? ['Fix: turn prefix caching on for the workers (drop --no-enable-prefix-caching); vLLM workers also need --kv-events-config with "enable_kv_cache_events": true.']
        : [
          'The usual cause: the KV router runs with events on while the workers publish none (frontend log: kv_event_publisher_disabled); its index stays empty and it routes by load only, with no error.',
          'Fix: give each worker --kv-events-config with "enable_kv_cache_events": true, or run the frontend with --no-router-kv-events (approximate routing).',
        ]),
      // A bare --url says nothing about the router: a frontend started by hand may not run the KV router at all.
      ...(ctx.routerMode ? [] : ['If this frontend does not run --router-mode kv (round-robin and random ignore prefixes), that alone explains it.']),
    ],
    next: KV_EVENTS_NEXT,
  };
}

/** Exit code of `probe`: 1 only when routing is at random level. */
export function verdictExitCode(v: Verdict): number {
  return v.code === 'random-level' ? 1 : 0;
}
