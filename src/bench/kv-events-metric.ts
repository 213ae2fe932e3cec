// Whether the KV router actually received KV events: the frontend's Prometheus counter
// `dynamo_component_kv_cache_events_applied{event_type, status, worker_id}` ("Total number of KV
// cache events applied to index"), exposed on the frontend's HTTP port at /metrics by a KV router
// (present in ai-dynamo 1.3.1 through 1.6.1's _core: the same name in each runtime library; absent
// with round-robin/random routing). Read from the real 1.6.1 frontend over the mocker
// (test/fixtures/samples/http/frontend-metrics-*-1.6.1.txt): after four completions it counts
// `event_type="stored",status="ok"` 1 for the worker that served them; with the workers' prefix
// caching off every series stays 0. No `kv_event_publisher_disabled` line alone does not prove the
// router got events (an unreachable publisher is only reported after a 30 s grace): this counter does.

export const KV_EVENTS_APPLIED = 'dynamo_component_kv_cache_events_applied';

export interface KvEventsApplied {
  /** Events applied to the router's index with status "ok", all event types. */
  ok: number;
  /** Events the index could not apply (any other status: block_not_found, ...). */
  rejected: number;
  /** ok events per worker_id label, for the evidence. */
  byWorker: Record<string, number>;
}

const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** Pure: the counter's sums from a /metrics text, or null when the text has no such series. */
export function kvEventsApplied(metrics: string): KvEventsApplied | null {
  let seen = false;
  const out: KvEventsApplied = { ok: 0, rejected: 0, byWorker: {} };
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(KV_EVENTS_APPLIED)) continue;
    const m = /^(\w+)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== KV_EVENTS_APPLIED) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2];
    seen = true;
    if (labels.status === 'ok') {
      out.ok += value;
      const w = labels.worker_id ?? '(no worker_id)';
      out.byWorker[w] = (out.byWorker[w] ?? 0) + value;
    } else {
      out.rejected += value;
    }
  }
  return seen ? out : null;
}
