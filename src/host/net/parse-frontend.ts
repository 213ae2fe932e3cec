import { cleanText } from './http-body.js';

// The frontend's JSON answers read into facts (/v1/models, /health instances, /v1/models/<model>/ready):
// pure parsers, fed the body http.ts fetched; doctor's frontend.models judges their results.

/** Model ids of an OpenAI list response ({"object":"list","data":[{"id":...}]}). Pure. */
export function modelIdsOf(body: unknown): string[] {
  if (body === null || typeof body !== 'object') return [];
  const data = (body as { data?: unknown }).data;
  if (!Array.isArray(data)) return [];
  return data.flatMap((m) => (m && typeof m === 'object' && typeof (m as { id?: unknown }).id === 'string' ? [cleanText((m as { id: string }).id)] : []));
}

export interface WorkerInstance {
  /** The instance id as read (a 64-bit number: JSON parsing may round its low digits). */
  id: string;
  /** `backend` for agg and decode workers, `prefill` for prefill workers. */
  component: string;
}

/**
 * The workers a frontend's /health lists (FACTS §4; 1.6.1: `{"status","endpoints","instances":
 * [{"component","endpoint","namespace","instance_id",...}]}`): one per distinct instance of a
 * `generate` endpoint. A worker also lists other endpoints (a KV query endpoint per publisher),
 * which are not workers. Pure.
 */
export function workerInstancesOf(healthBody: unknown): WorkerInstance[] {
  if (healthBody === null || typeof healthBody !== 'object') return [];
  const list = (healthBody as { instances?: unknown }).instances;
  if (!Array.isArray(list)) return [];
  const seen = new Map<string, WorkerInstance>();
  for (const i of list) {
    if (!i || typeof i !== 'object') continue;
    const { endpoint, component, instance_id: id } = i as { endpoint?: unknown; component?: unknown; instance_id?: unknown };
    if (endpoint !== 'generate' || (typeof id !== 'number' && typeof id !== 'string')) continue;
    // The whole entry, not the id: JSON numbers round 64-bit ids, so two workers' ids could meet.
    const key = JSON.stringify(i);
    if (!seen.has(key)) seen.set(key, { id: String(id), component: typeof component === 'string' ? component : '?' });
  }
  return [...seen.values()];
}

/**
 * The 1.6+ `/v1/models/<model>/ready` answer (observed on 1.6.1: `{"model","ready":true,"namespaces":
 * {"dynamo":{"ready":true,"worker_types":{"aggregated":{"workers":2,"needs":[]}},...}}}`): whether
 * the frontend would serve the model, and the workers it counts over every worker type. Null when
 * the body is not that shape (an older frontend, a 404). Pure.
 */
export function modelReadinessOf(body: unknown): { ready: boolean; workers: number; byType: Record<string, number> } | null {
  if (body === null || typeof body !== 'object' || typeof (body as { ready?: unknown }).ready !== 'boolean') return null;
  const namespaces = (body as { namespaces?: unknown }).namespaces;
  const byType: Record<string, number> = {};
  if (namespaces && typeof namespaces === 'object') {
    for (const ns of Object.values(namespaces as Record<string, unknown>)) {
      const types = ns && typeof ns === 'object' ? (ns as { worker_types?: unknown }).worker_types : null;
      if (!types || typeof types !== 'object') continue;
      for (const [t, v] of Object.entries(types as Record<string, unknown>)) {
        const n = v && typeof v === 'object' ? (v as { workers?: unknown }).workers : null;
        if (typeof n === 'number' && Number.isFinite(n)) byType[t] = (byType[t] ?? 0) + n;
      }
    }
  }
  return { ready: (body as { ready: boolean }).ready, workers: Object.values(byType).reduce((a, b) => a + b, 0), byType };
}
