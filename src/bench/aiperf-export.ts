// AIPerf's aggregate export, profile_export_aiperf.json (aiperf 0.13.0, schema_version "1.4";
// test/fixtures/aiperf/ holds one written by a real run against Dynamo 1.6.1's mocker). Each metric
// is `{unit, avg, p50, p90, min, max, ...}`; totals carry only `avg`. The parser is pure.
//
// Cache hits: the frontend's usage.prompt_tokens_details.cached_tokens, which AIPerf sums as
// total_usage_prompt_cache_read_tokens over total_usage_prompt_tokens (aiperf/metrics/types/
// usage_total_metrics.py). A release that reports no cached_tokens leaves them out: null (unknown),
// never a guess from timing.

export const EXPORT_FILE = 'profile_export_aiperf.json';

export interface RunMetrics {
  ttftP50Ms: number;
  ttftP90Ms: number;
  itlP50Ms: number;
  outputTokensPerSec: number;
  requestsPerSec: number;
  cacheHitShare: number | null;
  requests: number;
  errors: number;
}

type Metric = { unit?: string; avg?: number; p50?: number; p90?: number };

function metric(doc: Record<string, unknown>, key: string): Metric | null {
  const m = doc[key];
  return m !== null && typeof m === 'object' && !Array.isArray(m) ? (m as Metric) : null;
}

function need(doc: Record<string, unknown>, key: string, stat: 'avg' | 'p50' | 'p90', unit?: string): number {
  const m = metric(doc, key);
  const v = m?.[stat];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`no ${key}.${stat} in the export`);
  if (unit && m?.unit !== unit) throw new Error(`${key} is in ${m?.unit ?? 'no unit'}, expected ${unit}`);
  return v;
}

const opt = (doc: Record<string, unknown>, key: string): number | null => {
  const v = metric(doc, key)?.avg;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

/** The metrics of one load run from the export's text. Throws with what is missing. */
export function metricsFromExport(text: string): RunMetrics {
  const doc = JSON.parse(text) as unknown;
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('the export is not a JSON object');
  const d = doc as Record<string, unknown>;
  const completed = opt(d, 'completed_request_count') ?? opt(d, 'request_count') ?? 0;
  // error_summary: [{error_details: {...}, count}] (aiperf/common/models/error_models.py); also error_request_count.
  const summary = Array.isArray(d.error_summary) ? (d.error_summary as { count?: unknown }[]) : [];
  const errors = opt(d, 'error_request_count') ?? summary.reduce((n, e) => n + (typeof e.count === 'number' ? e.count : 0), 0);
  if (completed === 0) {
    throw new Error(`no request completed${errors ? ` (${errors} failed)` : ''}`);
  }
  const read = opt(d, 'total_usage_prompt_cache_read_tokens');
  const prompt = opt(d, 'total_usage_prompt_tokens');
  return {
    ttftP50Ms: need(d, 'time_to_first_token', 'p50', 'ms'),
    ttftP90Ms: need(d, 'time_to_first_token', 'p90', 'ms'),
    // One output token per answer has no inter-token latency: 0 rather than a missing table cell.
    itlP50Ms: metric(d, 'inter_token_latency') ? need(d, 'inter_token_latency', 'p50', 'ms') : 0,
    outputTokensPerSec: need(d, 'output_token_throughput', 'avg', 'tokens/sec'),
    requestsPerSec: need(d, 'request_throughput', 'avg', 'requests/sec'),
    cacheHitShare: read !== null && prompt !== null && prompt > 0 ? Math.min(1, read / prompt) : null,
    requests: Math.round(completed),
    errors: Math.round(errors),
  };
}
