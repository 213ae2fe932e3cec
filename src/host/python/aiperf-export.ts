// AIPerf's aggregate export, profile_export_aiperf.json (aiperf 0.13.0, schema_version "1.4";
// test/fixtures/aiperf/ holds one written by a real run against Dynamo 1.6.1's mocker). Each metric
// is `{unit, avg, p50, p90, min, max, ...}`; totals carry only `avg`. The parser is pure.
//
// Cache hits: the frontend's usage.prompt_tokens_details.cached_tokens, which AIPerf sums as
// total_usage_prompt_cache_read_tokens over total_usage_prompt_tokens (aiperf/metrics/types/
// usage_total_metrics.py). A release that reports no cached_tokens leaves them out: null (unknown),
// never a guess from timing.

export const EXPORT_FILE = 'profile_export_aiperf.json';

// A type, not an interface: it is stored in bench's result, whose loose zod objects take any key.
export type RunMetrics = {
  ttftP50Ms: number;
  ttftP90Ms: number;
  /** The mean beside the percentiles: on a two-valued TTFT (cache hits and misses) it moves with the share of each, where a percentile jumps. */
  ttftMeanMs: number;
  itlP50Ms: number;
  itlMeanMs: number;
  outputTokensPerSec: number;
  requestsPerSec: number;
  cacheHitShare: number | null;
  requests: number;
  errors: number;
  /** AIPerf's error texts grouped, as its error_summary counts them (empty: none failed). */
  errorTexts: ErrorText[];
};

// A type, not an interface: it is stored in bench's result, whose loose zod objects take any key.
export type ErrorText = {
  /** `Type: message` (or `HTTP code: message`) as AIPerf recorded it. */
  text: string;
  count: number;
};

/** A failed request's text from AIPerf's ErrorDetails {code, type, message} (aiperf/common/models/error_models.py). */
export function errorText(details: unknown): string {
  const d = details !== null && typeof details === 'object' ? (details as { code?: unknown; type?: unknown; message?: unknown }) : {};
  let message = typeof d.message === 'string' ? d.message.trim() : '';
  const head = typeof d.type === 'string' && d.type ? d.type : typeof d.code === 'number' ? `HTTP ${d.code}` : 'error';
  // AIPerf 0.13.0 keeps the exception's repr as its message: "InvalidInferenceResultError('Invalid
  // inference result: No responses ...')": the type is said once, the text unquoted.
  const repr = new RegExp(`^${head.replace(/[^\w]/g, '\\$&')}\\((['"])([\\s\\S]*)\\1\\)$`).exec(message);
  if (repr) message = repr[2];
  return (message ? `${head}: ${message}` : head).replace(/\s+/g, ' ').slice(0, 300);
}

/** error_summary: [{error_details, count}] grouped by text, largest first. */
export function errorTextsOf(summary: unknown): ErrorText[] {
  const byText = new Map<string, number>();
  for (const e of Array.isArray(summary) ? summary : []) {
    const entry = e !== null && typeof e === 'object' ? (e as { error_details?: unknown; count?: unknown }) : {};
    const n = typeof entry.count === 'number' && entry.count > 0 ? Math.round(entry.count) : 0;
    if (n === 0) continue;
    const text = errorText(entry.error_details);
    byText.set(text, (byText.get(text) ?? 0) + n);
  }
  return [...byText].map(([text, count]) => ({ text, count })).sort((a, b) => b.count - a.count || a.text.localeCompare(b.text));
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
  // request_count: the requests that succeeded; completed_request_count: every request that ended,
  // failed ones included (a real run: 23 and 24 with 1 error, request_error_rate 4.17% = 1/24).
  // error_summary: [{error_details: {...}, count}] (aiperf/common/models/error_models.py); also error_request_count.
  const summary = Array.isArray(d.error_summary) ? (d.error_summary as { count?: unknown }[]) : [];
  const errors = opt(d, 'error_request_count') ?? summary.reduce((n, e) => n + (typeof e.count === 'number' ? e.count : 0), 0);
  const ended = opt(d, 'completed_request_count');
  const completed = opt(d, 'request_count') ?? (ended !== null ? Math.max(0, ended - errors) : 0);
  const errorTexts = errorTextsOf(d.error_summary);
  if (completed === 0) {
    const said = errorTexts.map((e) => `"${e.text}" x${e.count}`).join('; ');
    throw new Error(`no request completed${errors ? ` (${errors} failed${said ? `: ${said}` : ''})` : ''}`);
  }
  const read = opt(d, 'total_usage_prompt_cache_read_tokens');
  const prompt = opt(d, 'total_usage_prompt_tokens');
  return {
    ttftP50Ms: need(d, 'time_to_first_token', 'p50', 'ms'),
    ttftP90Ms: need(d, 'time_to_first_token', 'p90', 'ms'),
    ttftMeanMs: need(d, 'time_to_first_token', 'avg', 'ms'),
    // One output token per answer has no inter-token latency: 0 rather than a missing table cell.
    itlP50Ms: metric(d, 'inter_token_latency') ? need(d, 'inter_token_latency', 'p50', 'ms') : 0,
    itlMeanMs: metric(d, 'inter_token_latency') ? need(d, 'inter_token_latency', 'avg', 'ms') : 0,
    outputTokensPerSec: need(d, 'output_token_throughput', 'avg', 'tokens/sec'),
    requestsPerSec: need(d, 'request_throughput', 'avg', 'requests/sec'),
    cacheHitShare: read !== null && prompt !== null && prompt > 0 ? Math.min(1, read / prompt) : null,
    requests: Math.round(completed),
    errors: Math.round(errors),
    errorTexts,
  };
}
