import type { ProbeSettings } from './run.js';
import type { ProbeSend, ProbeStats } from './stats.js';
import type { Verdict } from './verdict.js';

// The `probe --json` document (one JSON object). Field names are stable: scripts read them.

export interface ProbeDocument {
  url: string;
  model: string;
  settings: ProbeSettings & { maxTokens: number; timeoutSeconds: number };
  durationMs: number;
  requests: { sent: number; ok: number; failed: number };
  hitRate: number | null;
  hits: number;
  repeatsJudged: number;
  method: ProbeStats['method'];
  firstRepeatHitRate: number | null;
  randomHitRate: number | null;
  workers: string[];
  /** Worker id -> the run's process serving it (agg-0), for the ids that could be told; {} off a run. */
  workerNames: Record<string, string>;
  workerIdsReported: boolean;
  meanWorkersPerPrefix: number | null;
  affinity: number | null;
  randomAffinity: number | null;
  ttft: ProbeStats['ttft'];
  prefixes: { prefix: number; workers: string[]; repeats: number; hits: number; cachedTokens: (number | null)[]; ttftMs: (number | null)[] }[];
  sends: Omit<ProbeSend, 'prefixWords' | 'tailWords'>[];
  verdict: Verdict;
  notes: string[];
}

const round = (x: number | null, digits = 2) => (x === null ? null : Math.round(x * 10 ** digits) / 10 ** digits);

export function probeDocument(a: {
  url: string;
  model: string;
  settings: ProbeDocument['settings'];
  durationMs: number;
  sends: ProbeSend[];
  stats: ProbeStats;
  verdict: Verdict;
  notes: string[];
  workerNames?: ReadonlyMap<string, string>;
}): ProbeDocument {
  const s = a.stats;
  return {
    url: a.url,
    model: a.model,
    settings: a.settings,
    durationMs: Math.round(a.durationMs),
    requests: { sent: s.sends, ok: s.ok, failed: s.failed },
    hitRate: round(s.hitRate, 4),
    hits: s.hits,
    repeatsJudged: s.repeatsJudged,
    method: s.method,
    firstRepeatHitRate: round(s.firstRepeatHitRate, 4),
    randomHitRate: round(s.randomHitRate, 4),
    workers: s.workers,
    workerNames: Object.fromEntries(s.workers.flatMap((w) => (a.workerNames?.has(w) ? [[w, a.workerNames.get(w) as string]] : []))),
    workerIdsReported: s.workerIdsReported,
    meanWorkersPerPrefix: round(s.meanWorkersPerPrefix),
    affinity: round(s.affinity, 4),
    randomAffinity: round(s.randomAffinity, 4),
    ttft: {
      firstMedianMs: round(s.ttft.firstMedianMs),
      repeatMedianMs: round(s.ttft.repeatMedianMs),
      hitMedianMs: round(s.ttft.hitMedianMs),
      missMedianMs: round(s.ttft.missMedianMs),
    },
    prefixes: s.perPrefix.map((p) => ({ ...p, ttftMs: p.ttftMs.map((t) => round(t)) })),
    sends: a.sends.map(({ prefixWords: _pw, tailWords: _tw, ...rest }) => ({
      ...rest,
      ttftMs: round(rest.ttftMs),
      totalMs: round(rest.totalMs),
    })),
    verdict: a.verdict,
    notes: a.notes,
  };
}
