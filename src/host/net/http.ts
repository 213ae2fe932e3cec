import { BodyTooLargeError, cleanDeep, cleanText, parseServerJson, readCapped } from './http-body.js';
import { modelReadyUrl } from '../../plan/model-ready.js';
import type { FrontendFacts, HttpProbe } from '../types.js';
import { modelIdsOf } from './parse-frontend.js';

export { modelIdsOf, modelReadinessOf, workerInstancesOf, type WorkerInstance } from './parse-frontend.js';

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
