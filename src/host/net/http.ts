import { BodyTooLargeError, cleanDeep, cleanText, parseServerJson, readCapped } from './http-body.js';
import { modelReadyUrl } from '../../plan/model-ready.js';
import type { FrontendFacts, HttpProbe } from '../types.js';

/**
 * GET a URL and read its JSON body (a non-JSON body is kept as text), at most 8 MiB, every string
 * made printable. Never throws.
 */
export async function getJson(url: string, timeoutMs: number): Promise<HttpProbe> {
  return requestJson(url, timeoutMs);
}

/** POST a JSON body and read the JSON answer, as getJson. Never throws. */
export async function postJson(url: string, body: unknown, timeoutMs: number): Promise<HttpProbe> {
  return requestJson(url, timeoutMs, body);
}

/** GET a text body (a Prometheus /metrics page), at most 8 MiB; null on any failure or a non-2xx answer. Never throws. */
export async function getText(url: string, timeoutMs: number): Promise<string | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await readCapped(res);
    return res.ok ? text : null;
  } catch {
    return null;
  }
}

async function requestJson(url: string, timeoutMs: number, post?: unknown): Promise<HttpProbe> {
  try {
    const res = await fetch(url, {
      signal: AbortSignal.timeout(timeoutMs),
      headers: post === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      ...(post === undefined ? {} : { method: 'POST', body: JSON.stringify(post) }),
    });
    let text: string;
    try {
      text = await readCapped(res);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return { url, ok: false, status: res.status, body: null, error: err.message };
      throw err;
    }
    let body: unknown = cleanText(text);
    try {
      body = text === '' ? null : cleanDeep(parseServerJson(text));
    } catch {
      // keep the raw text: a proxy's HTML error page is evidence too
    }
    return { url, ok: res.ok, status: res.status, body, error: null };
  } catch (err) {
    return { url, ok: false, status: null, body: null, error: describeFetchError(err, timeoutMs) };
  }
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const code = e?.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused (nothing listens on that port)';
  return code ?? e?.cause?.message ?? e?.message ?? String(err);
}

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

/**
 * The frontend's /health, /v1/models and, given a model, its /v1/models/<model>/ready (1.6+; an
 * older frontend answers 404 there), asked concurrently.
 */
export async function probeFrontend(url: string, timeoutMs: number, model?: string): Promise<FrontendFacts> {
  const base = url.replace(/\/+$/, '');
  const readyUrl = model ? modelReadyUrl(base, model) : null;
  const [health, models, modelReady] = await Promise.all([
    getJson(`${base}/health`, timeoutMs),
    getJson(`${base}/v1/models`, timeoutMs),
    // An id that starts with "/" (a local folder) has no addressable /ready (404 on 1.6.1).
    readyUrl ? getJson(readyUrl, timeoutMs) : Promise.resolve(null),
  ]);
  return { url: base, health, models, modelIds: modelIdsOf(models.body), modelReady };
}
