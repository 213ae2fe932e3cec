import type { BenchMetrics, BenchResult, BenchVariant, VariantStatus } from './result.js';

// Pure: a stored bench result summarised for the report, the plot and compare. Per metric x
// variant x concurrency: the median over the repeats, the min-max spread, and the ratio to the
// first measured variant. Only a measured variant has numbers: invalid and failed ones carry their
// status and reason, missing ones (an interrupted bench) are named. A metric the release did not
// report (cache hits: null) is unknown, never 0.

export type MetricKey = 'ttftP50Ms' | 'ttftP90Ms' | 'itlP50Ms' | 'outputTokensPerSec' | 'requestsPerSec' | 'cacheHitShare';

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
  { key: 'itlP50Ms', title: 'ITL p50', unit: 'ms', better: 'lower', percent: false },
  { key: 'outputTokensPerSec', title: 'output tokens/s', unit: 'tok/s', better: 'higher', percent: false },
  { key: 'requestsPerSec', title: 'request throughput', unit: 'req/s', better: 'higher', percent: false },
  { key: 'cacheHitShare', title: 'cache-hit share', unit: '%', better: 'higher', percent: true },
];

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
  /** By concurrency, in the order of `Summary.concurrency`; empty unless measured. */
  cells: Cell[];
}

export interface MetricTable {
  metric: MetricInfo;
  rows: SummaryRow[];
}

export interface Summary {
  concurrency: number[];
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

function cellOf(v: BenchVariant, key: MetricKey, concurrency: number): Cell {
  const runs = v.runs.filter((r) => r.concurrency === concurrency);
  if (runs.length === 0) return { kind: 'none' };
  const values = runs.map((r) => (r.metrics as BenchMetrics)[key] as number | null | undefined);
  // One repeat without the number makes the median a guess: unknown, as the release's null is.
  if (values.some((x) => x === null || x === undefined || !Number.isFinite(x))) return { kind: 'unknown', repeats: runs.length };
  const xs = values as number[];
  return { kind: 'value', median: median(xs), min: Math.min(...xs), max: Math.max(...xs), repeats: xs.length, ratio: null };
}

export interface LabelledVariant {
  label: string;
  variant: BenchVariant;
}

/** The summary of labelled variants (one result's, or two results' for compare) over the given concurrencies. */
export function summarizeVariants(variants: readonly LabelledVariant[], concurrency: readonly number[]): Summary {
  const conc = [...new Set(concurrency)].sort((a, b) => a - b);
  const first = variants.find((x) => x.variant.status === 'measured') ?? null;
  const counts: Record<VariantStatus, number> = { measured: 0, invalid: 0, failed: 0, missing: 0 };
  for (const { variant } of variants) counts[variant.status] += 1;
  const tables = METRICS.map((metric): MetricTable => {
    const base = first ? conc.map((c) => cellOf(first.variant, metric.key, c)) : [];
    const rows = variants.map(({ label, variant }): SummaryRow => {
      if (variant.status !== 'measured') return { label, status: variant.status, reason: variant.reason, cells: [] };
      const cells = conc.map((c, i): Cell => {
        const cell = cellOf(variant, metric.key, c);
        const b = base[i];
        if (cell.kind !== 'value' || b?.kind !== 'value' || b.median === 0) return cell;
        return { ...cell, ratio: cell.median / b.median };
      });
      return { label, status: variant.status, reason: variant.reason, cells };
    });
    return { metric, rows };
  });
  return {
    concurrency: conc,
    baseline: first?.label ?? null,
    tables,
    missing: variants.filter((x) => x.variant.status === 'missing').map((x) => x.label),
    counts,
  };
}

/** The summary of one stored result. */
export const summarize = (doc: BenchResult): Summary =>
  summarizeVariants(doc.variants.map((variant) => ({ label: variant.name, variant })), doc.concurrency);

/** Compare's letters: A for the first result, B for the second. */
export const COMPARE_LETTERS = ['A', 'B'] as const;

/** The summary of two results side by side: every variant of both, labelled `A name` / `B name`, ratios against the first measured. */
export const summarizeCompare = (a: BenchResult, b: BenchResult): Summary =>
  summarizeVariants(
    [a, b].flatMap((doc, i) => doc.variants.map((variant) => ({ label: `${COMPARE_LETTERS[i]} ${variant.name}`, variant }))),
    [...a.concurrency, ...b.concurrency],
  );
