import type { BenchMetrics, BenchResult, BenchRun, BenchVariant, VariantStatus } from './result.js';
import { hitFlags } from '../host/python/aiperf-records.js';
import { controlOutcome, type ControlOutcome } from './controls.js';

// Pure: a stored bench result summarised for the report, the plot and compare. Per metric x
// variant x concurrency: the median over the repeats, the min-max spread, and the ratio to the
// first measured variant. Only a measured variant has numbers: invalid and failed ones carry their
// status and reason, missing ones (an interrupted bench) are named. A metric the release did not
// report (cache hits: null) is unknown, never 0.

export type MetricKey =
  | 'cacheHitShare' | 'ttftMeanMs' | 'ttftHitMs' | 'ttftMissMs' | 'ttftP50Ms' | 'ttftP90Ms'
  | 'itlMeanMs' | 'itlP50Ms' | 'outputTokensPerSec' | 'requestsPerSec';

export interface MetricInfo {
  key: MetricKey;
  title: string;
  unit: string;
  better: 'lower' | 'higher';
  /** Shown as a percentage (a share 0..1). */
  percent: boolean;
}

export const METRICS: readonly MetricInfo[] = [
  { key: 'ttftP50Ms', title: 'TTFT p50', unit: 'ms', better: 'lower', percent: false },
  { key: 'ttftP90Ms', title: 'TTFT p90', unit: 'ms', better: 'lower', percent: false },
  { key: 'ttftMeanMs', title: 'TTFT mean', unit: 'ms', better: 'lower', percent: false },
  { key: 'ttftHitMs', title: 'TTFT mean of cache hits', unit: 'ms', better: 'lower', percent: false },
  { key: 'ttftMissMs', title: 'TTFT mean of cache misses', unit: 'ms', better: 'lower', percent: false },
  { key: 'itlP50Ms', title: 'ITL p50', unit: 'ms', better: 'lower', percent: false },
  { key: 'itlMeanMs', title: 'ITL mean', unit: 'ms', better: 'lower', percent: false },
  { key: 'outputTokensPerSec', title: 'output tokens/s', unit: 'tok/s', better: 'higher', percent: false },
  { key: 'requestsPerSec', title: 'request throughput', unit: 'req/s', better: 'higher', percent: false },
  { key: 'cacheHitShare', title: 'cache-hit share', unit: '%', better: 'higher', percent: true },
];

/**
 * The metrics that carry what a preset tests, in the order the report and the plots show them
 * first (issue 31): routing changes which worker holds a prefix, so the share of prompt tokens
 * served from the cache and the TTFT of hits and misses (two-valued: a percentile only moves when
 * the hit share crosses it); agg-vs-disagg and the frontend's overhead change time to the first
 * token and between tokens. A plain bench: the mean TTFT and the throughput.
 */
export const HEADLINES: Record<string, readonly MetricKey[]> = {
  routing: ['cacheHitShare', 'ttftMeanMs', 'ttftHitMs', 'ttftMissMs'],
  'agg-vs-disagg': ['ttftMeanMs', 'itlMeanMs'],
  'frontend-overhead': ['ttftMeanMs', 'itlMeanMs'],
};
export const DEFAULT_HEADLINE: readonly MetricKey[] = ['ttftMeanMs', 'outputTokensPerSec'];

/** The headline metrics of a result: its preset's, else the default. */
export const headlineOf = (preset: string | null): readonly MetricKey[] =>
  (preset !== null && Object.hasOwn(HEADLINES, preset) ? HEADLINES[preset] : DEFAULT_HEADLINE);

/** Above this share of failed requests a variant is flagged in the report and the plot. */
export const ERROR_FLAG_RATE = 0.01;

/** One variant at one concurrency: numbers, unknown (a run did not report it), or no run at all. */
export type Cell =
  | { kind: 'value'; median: number; min: number; max: number; repeats: number; ratio: number | null }
  | { kind: 'unknown'; repeats: number }
  | { kind: 'none' };

export interface SummaryRow {
  /** The variant's name as shown (compare prefixes the result's letter). */
  label: string;
  status: VariantStatus;
  reason: string | null;
  /** A preset's control and how it came out; null for the others. */
  control: ControlOutcome | null;
  /** By concurrency, in the order of `Summary.concurrency`; empty unless measured. */
  cells: Cell[];
}

export interface MetricTable {
  metric: MetricInfo;
  rows: SummaryRow[];
}

/** One variant at one concurrency: failed requests of those sent, per run and in all. */
export interface ErrorCell {
  failed: number;
  sent: number;
  perRun: number[];
  /** AIPerf's error texts over the runs, grouped, largest first. */
  texts: { text: string; count: number }[];
}

/** Where a variant's TTFT falls in two modes apart (cache hits and misses): pooled over the repeats. */
export interface Modes {
  label: string;
  concurrency: number;
  lower: { min: number; max: number; n: number };
  upper: { min: number; max: number; n: number };
  /** Percentiles (50, 90) within 10 points of the lower mode's share: on the gap, they jump with that share. */
  onGap: number[];
}

export interface Summary {
  concurrency: number[];
  /** The metrics that carry the preset's effect, shown first. */
  headline: readonly MetricKey[];
  /** By label, by concurrency (as `concurrency`): null where the variant has no runs there. */
  errors: Map<string, (ErrorCell | null)[]>;
  /** By label, by concurrency: every completed request's TTFT over the repeats and whether it hit (null: unknown). */
  samples: Map<string, ({ ttftMs: number[]; hits: boolean[] | null } | null)[]>;
  /** TTFTs that are two-valued, with the percentiles that sit on their gap. */
  modes: Modes[];
  /** The label of the first measured variant: the ratios' 1.00x; null when none was measured. */
  baseline: string | null;
  tables: MetricTable[];
  /** Labels of the variants an interrupted bench never ran. */
  missing: string[];
  counts: Record<VariantStatus, number>;
}

/** The median of a non-empty list: the middle value, or the mean of the two middle ones. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of nothing');
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The TTFTs of a run's hits (or misses), or null when the run has no per-request samples with cache counts. */
export function ttftOfKind(r: BenchRun, hit: boolean): number[] | null {
  const flags = r.samples ? hitFlags(r.samples) : null;
  if (!r.samples || !flags) return null;
  return r.samples.ttftMs.filter((_, i) => flags[i] === hit);
}

/** A metric of one run: stored, or derived from its samples; null/undefined when it cannot be known. */
function runValue(r: BenchRun, key: MetricKey): number | null | undefined {
  if (key === 'ttftHitMs' || key === 'ttftMissMs') {
    const xs = ttftOfKind(r, key === 'ttftHitMs');
    // No request of that kind in this run: no number, but not unknown either (NaN: left out).
    return xs === null ? null : xs.length === 0 ? Number.NaN : mean(xs);
  }
  return (r.metrics as BenchMetrics)[key as keyof BenchMetrics] as number | null | undefined;
}

function cellOf(v: BenchVariant, key: MetricKey, concurrency: number): Cell {
  const runs = v.runs.filter((r) => r.concurrency === concurrency);
  if (runs.length === 0) return { kind: 'none' };
  let values = runs.map((r) => runValue(r, key));
  if (key === 'ttftHitMs' || key === 'ttftMissMs') {
    // A run without a request of that kind has no mean of them: the others' give the cell.
    if (values.every((x) => x !== null && Number.isNaN(x))) return { kind: 'none' };
    values = values.filter((x) => !(x !== null && Number.isNaN(x)));
  }
  // One repeat without the number makes the median a guess: unknown, as the release's null is.
  if (values.some((x) => x === null || x === undefined || !Number.isFinite(x))) return { kind: 'unknown', repeats: runs.length };
  const xs = values as number[];
  return { kind: 'value', median: median(xs), min: Math.min(...xs), max: Math.max(...xs), repeats: xs.length, ratio: null };
}

export interface LabelledVariant {
  label: string;
  variant: BenchVariant;
}

function errorCell(v: BenchVariant, concurrency: number): ErrorCell | null {
  const runs = v.runs.filter((r) => r.concurrency === concurrency);
  if (runs.length === 0) return null;
  const texts = new Map<string, number>();
  for (const r of runs) for (const e of r.metrics.errorTexts ?? []) texts.set(e.text, (texts.get(e.text) ?? 0) + e.count);
  const failed = runs.reduce((n, r) => n + r.metrics.errors, 0);
  return {
    failed, sent: failed + runs.reduce((n, r) => n + r.metrics.requests, 0), perRun: runs.map((r) => r.metrics.errors),
    texts: [...texts].map(([text, count]) => ({ text, count })).sort((a, b) => b.count - a.count || a.text.localeCompare(b.text)),
  };
}

function samplesCell(v: BenchVariant, concurrency: number): { ttftMs: number[]; hits: boolean[] | null } | null {
  const runs = v.runs.filter((r) => r.concurrency === concurrency && r.samples);
  if (runs.length === 0) return null;
  const flags = runs.map((r) => hitFlags(r.samples!));
  return { ttftMs: runs.flatMap((r) => r.samples!.ttftMs), hits: flags.every((f) => f !== null) ? flags.flatMap((f) => f!) : null };
}

/**
 * Two modes in a sample, or null: the widest gap between neighbouring values (sorted) is at least
 * a third of the median and both sides hold at least 10% of the values (the mocker's hits at
 * 347-386 ms and misses at 668-713 ms). Pure.
 */
export function twoModes(xs: readonly number[]): { lower: { min: number; max: number; n: number }; upper: { min: number; max: number; n: number } } | null {
  if (xs.length < 10) return null;
  const s = [...xs].sort((a, b) => a - b);
  let at = -1;
  let gap = 0;
  for (let i = 1; i < s.length; i++) if (s[i] - s[i - 1] > gap) [gap, at] = [s[i] - s[i - 1], i];
  if (at < 0 || gap < median(s) / 3) return null;
  const minSide = Math.ceil(s.length * 0.1);
  if (at < minSide || s.length - at < minSide) return null;
  return { lower: { min: s[0], max: s[at - 1], n: at }, upper: { min: s[at], max: s[s.length - 1], n: s.length - at } };
}

/** The summary of labelled variants (one result's, or two results' for compare) over the given concurrencies. */
export function summarizeVariants(variants: readonly LabelledVariant[], concurrency: readonly number[], headline: readonly MetricKey[] = DEFAULT_HEADLINE): Summary {
  const conc = [...new Set(concurrency)].sort((a, b) => a - b);
  const first = variants.find((x) => x.variant.status === 'measured') ?? null;
  const counts: Record<VariantStatus, number> = { measured: 0, invalid: 0, failed: 0, missing: 0 };
  for (const { variant } of variants) counts[variant.status] += 1;
  const tables = METRICS.map((metric): MetricTable => {
    const base = first ? conc.map((c) => cellOf(first.variant, metric.key, c)) : [];
    const rows = variants.map(({ label, variant }): SummaryRow => {
      const control = controlOutcome(variant);
      if (variant.status !== 'measured') return { label, status: variant.status, reason: variant.reason, control, cells: [] };
      const cells = conc.map((c, i): Cell => {
        const cell = cellOf(variant, metric.key, c);
        const b = base[i];
        if (cell.kind !== 'value' || b?.kind !== 'value' || b.median === 0) return cell;
        return { ...cell, ratio: cell.median / b.median };
      });
      return { label, status: variant.status, reason: variant.reason, control, cells };
    });
    return { metric, rows };
  });
  const measured = variants.filter((x) => x.variant.status === 'measured');
  const errors = new Map(measured.map(({ label, variant }) => [label, conc.map((c) => errorCell(variant, c))]));
  const samples = new Map(measured.map(({ label, variant }) => [label, conc.map((c) => samplesCell(variant, c))]));
  const modes: Modes[] = [];
  for (const [label, cells] of samples) {
    cells.forEach((cell, i) => {
      const m = cell ? twoModes(cell.ttftMs) : null;
      if (!m) return;
      const share = m.lower.n / (m.lower.n + m.upper.n);
      modes.push({ label, concurrency: conc[i], ...m, onGap: [50, 90].filter((p) => Math.abs(p / 100 - share) <= 0.1) });
    });
  }
  return {
    concurrency: conc,
    headline,
    errors,
    samples,
    modes,
    baseline: first?.label ?? null,
    tables,
    missing: variants.filter((x) => x.variant.status === 'missing').map((x) => x.label),
    counts,
  };
}

/** The summary of one stored result. */
export const summarize = (doc: BenchResult): Summary =>
  summarizeVariants(doc.variants.map((variant) => ({ label: variant.name, variant })), doc.concurrency, headlineOf(doc.preset));

/** Compare's letters: A for the first result, B for the second. */
export const COMPARE_LETTERS = ['A', 'B'] as const;

/** The summary of two results side by side: every variant of both, labelled `A name` / `B name`, ratios against the first measured. */
export const summarizeCompare = (a: BenchResult, b: BenchResult): Summary =>
  summarizeVariants(
    [a, b].flatMap((doc, i) => doc.variants.map((variant) => ({ label: `${COMPARE_LETTERS[i]} ${variant.name}`, variant }))),
    [...a.concurrency, ...b.concurrency],
    a.preset === b.preset ? headlineOf(a.preset) : DEFAULT_HEADLINE,
  );
