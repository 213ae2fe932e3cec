// AIPerf's per-request export, profile_export.jsonl (aiperf 0.13.0: one MetricRecordInfo per line,
// {metadata, metrics: {NAME: {value, unit}}, error}: aiperf/common/models/record_models.py;
// test/fixtures/aiperf/ holds one written by a real run against Dynamo 1.6.1's mocker). Pure.
//
// What the aggregate export cannot say: which requests hit the prefix cache and how long each
// waited for its first token. The routing experiment's TTFT is two-valued (a hit skips most of the
// prefill), so its effect is in the share of hits and the TTFT of each kind, not in a percentile.
// Per completed request: time_to_first_token (ms), usage_prompt_cache_read_tokens (the frontend's
// usage.prompt_tokens_details.cached_tokens; absent where the release does not report it) and
// usage_prompt_tokens.

export const RECORDS_FILE = 'profile_export.jsonl';

/** The completed requests of one load run, in the order AIPerf wrote them. */
// A type, not an interface: it is stored in bench's result, whose loose zod objects take any key.
export type RequestSamples = {
  ttftMs: number[];
  /** Cached prompt tokens per request; null when any request lacks them (unknown, never 0). */
  cachedTokens: number[] | null;
  promptTokens: number[] | null;
};

const value = (metrics: Record<string, unknown>, key: string): number | null => {
  const m = metrics[key];
  const v = m !== null && typeof m === 'object' ? (m as { value?: unknown }).value : undefined;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
};

/** The samples of the completed requests; a line that is not a record (or a failed request) is left out. */
export function samplesFromRecords(text: string): RequestSamples {
  const ttft: number[] = [];
  const cached: (number | null)[] = [];
  const prompt: (number | null)[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    if (rec === null || typeof rec !== 'object') continue;
    const r = rec as { metrics?: unknown; error?: unknown };
    if (r.error !== null && r.error !== undefined) continue;
    const metrics = r.metrics !== null && typeof r.metrics === 'object' ? (r.metrics as Record<string, unknown>) : {};
    const t = value(metrics, 'time_to_first_token');
    if (t === null) continue;
    ttft.push(Math.round(t * 10) / 10);
    cached.push(value(metrics, 'usage_prompt_cache_read_tokens'));
    prompt.push(value(metrics, 'usage_prompt_tokens'));
  }
  const all = (xs: (number | null)[]) => (xs.length > 0 && xs.every((x) => x !== null) ? (xs as number[]) : null);
  return { ttftMs: ttft, cachedTokens: all(cached), promptTokens: all(prompt) };
}

/**
 * A request is a cache hit when at least half of its prompt came from the prefix cache: the routing
 * load's prompts are a 1024-token shared prefix and a short tail, so a hit reads ~96% of its prompt
 * from the cache and a miss none (real 1.6.1 mocker: 1024 of 1068, or 0). Null: unknown.
 */
export function hitFlags(s: RequestSamples): boolean[] | null {
  if (!s.cachedTokens || !s.promptTokens) return null;
  return s.cachedTokens.map((c, i) => s.promptTokens![i] > 0 && c * 2 >= s.promptTokens![i]);
}
