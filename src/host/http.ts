import { BodyTooLargeError, cleanDeep, cleanText, readCapped } from './http-body.js';
import type { FrontendFacts, HttpProbe } from './types.js';

/**
 * GET a URL and read its JSON body (a non-JSON body is kept as text), at most 8 MiB, every string
 * made printable. Never throws.
 */
export async function getJson(url: string, timeoutMs: number): Promise<HttpProbe> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    let text: string;
    try {
      text = await readCapped(res);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return { url, ok: false, status: res.status, body: null, error: err.message };
      throw err;
    }
    let body: unknown = cleanText(text);
    try {
      body = text === '' ? null : cleanDeep(JSON.parse(text));
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

/** The frontend's /health and /v1/models, asked concurrently. */
export async function probeFrontend(url: string, timeoutMs: number): Promise<FrontendFacts> {
  const base = url.replace(/\/+$/, '');
  const [health, models] = await Promise.all([getJson(`${base}/health`, timeoutMs), getJson(`${base}/v1/models`, timeoutMs)]);
  return { url: base, health, models, modelIds: modelIdsOf(models.body) };
}
