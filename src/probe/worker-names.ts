// Which process of the run each Dynamo worker id is (agg-0, not 2122886748942083121). Pure.
//
// Two sources, both observed on ai-dynamo 1.6.1 (the mocker, `python -m dynamo.mocker`):
// - The frontend's /health lists each worker's `generate` endpoint with its request-plane
//   transport, `"transport": {"tcp": "192.0.2.2:46591/1d7602402913a431/dynamo/backend/generate"}`:
//   the port the worker listens on, then its instance id in hex (0x1d7602402913a431 =
//   2122886748942083121, the id nvext.worker_id reports). The process listening on that port is
//   the worker; this needs no log line and holds at any log level.
// - The worker's own log names its id at start: `FPM direct publisher started worker_id=N`,
//   `Initializing KvEventPublisher for worker N ...`, `WorkerKvQuery endpoint starting for worker N`.
//   Used for a worker whose transport carries no port (a NATS request plane).

/** A worker instance as the frontend's /health lists it: its id (decimal, exact) and request-plane port. */
export interface WorkerEndpoint {
  id: string;
  port: number | null;
}

const TCP_TRANSPORT = /^[^/]*:(\d{1,5})\/([0-9a-fA-F]{1,16})\//;

/**
 * The `generate` endpoints of a parsed /health body. The id is read from the transport's hex
 * (exact: JSON.parse rounds the u64 instance_id above 2^53), else the instance_id as given.
 */
export function workerEndpointsOf(healthBody: unknown): WorkerEndpoint[] {
  if (healthBody === null || typeof healthBody !== 'object') return [];
  const list = (healthBody as { instances?: unknown }).instances;
  if (!Array.isArray(list)) return [];
  const out = new Map<string, WorkerEndpoint>();
  for (const i of list) {
    if (!i || typeof i !== 'object') continue;
    const { endpoint, instance_id: raw, transport } = i as { endpoint?: unknown; instance_id?: unknown; transport?: unknown };
    if (endpoint !== 'generate') continue;
    const tcp = transport && typeof transport === 'object' ? (transport as { tcp?: unknown }).tcp : undefined;
    const m = typeof tcp === 'string' ? TCP_TRANSPORT.exec(tcp) : null;
    const id = m ? BigInt(`0x${m[2]}`).toString() : typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : typeof raw === 'string' && /^\d+$/.test(raw) ? raw : null;
    if (id === null) continue;
    const port = m ? Number(m[1]) : null;
    out.set(id, { id, port: port !== null && port > 0 && port < 65536 ? port : null });
  }
  return [...out.values()];
}

const OWN_ID_LINES = [
  /\bFPM direct publisher started worker_id=(\d+)/,
  /\bInitializing KvEventPublisher for worker (\d+)/,
  /\bWorkerKvQuery endpoint starting for worker (\d+)/,
];

/**
 * The worker id a worker's log says is its own: the last one named, since a restart appends a new
 * start (with a new id) to the same log.
 */
export function ownWorkerIdInLog(text: string): string | null {
  let last: { at: number; id: string } | null = null;
  for (const re of OWN_ID_LINES) {
    const g = new RegExp(re.source, 'g');
    for (let m = g.exec(text); m; m = g.exec(text)) if (!last || m.index > last.at) last = { at: m.index, id: m[1] };
  }
  return last?.id ?? null;
}

/**
 * Worker id -> process name: by the process holding the endpoint's port first, then by the id a
 * worker's log names. A process claimed by two ids (a stale listing) names neither.
 */
export function nameWorkers(
  endpoints: readonly WorkerEndpoint[],
  processOfPort: ReadonlyMap<number, string>,
  idInLog: ReadonlyMap<string, string | null>,
): Map<string, string> {
  const names = new Map<string, string>();
  for (const e of endpoints) {
    const byPort = e.port !== null ? processOfPort.get(e.port) : undefined;
    if (byPort) names.set(e.id, byPort);
  }
  for (const [name, id] of idInLog) {
    if (id !== null && !names.has(id) && ![...names.values()].includes(name)) names.set(id, name);
  }
  const count = new Map<string, number>();
  for (const n of names.values()) count.set(n, (count.get(n) ?? 0) + 1);
  for (const [id, n] of names) if ((count.get(n) ?? 0) > 1) names.delete(id);
  return names;
}
