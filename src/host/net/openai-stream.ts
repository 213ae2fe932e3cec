import { SseDecoder, SseTooLargeError, interpretChunk } from './parse-sse.js';
import { modelIdsOf } from './http.js';
import { BodyTooLargeError, MAX_BODY_BYTES, cleanText, parseServerJson, readCapped } from './http-body.js';

// The HTTP side of `probe`: one streaming chat completion against a Dynamo frontend, timed as a
// user measures it (Node 20 fetch; the SSE parsing is pure, in parse-sse.ts).

export interface ChatStreamRequest {
  /** Frontend base URL, e.g. http://127.0.0.1:8000 */
  baseUrl: string;
  model: string;
  prompt: string;
  maxTokens: number;
  timeoutMs: number;
  /** The caller's cancel (Ctrl-C): aborts the request at once, with RequestAbortedError. */
  signal?: AbortSignal;
}

export interface ChatStreamResult {
  /** Request start to the first chunk carrying text. */
  ttftMs: number;
  totalMs: number;
  /** usage.prompt_tokens_details.cached_tokens; null when the frontend does not report it. */
  cachedTokens: number | null;
  /** nvext.worker_id (prefill worker, else decode worker) as a decimal string; null when not reported. */
  workerId: string | null;
  promptTokens: number | null;
}

/** Nothing answers at the URL (refused, unknown host, unreachable). */
export class FrontendUnreachableError extends Error {
  constructor(readonly url: string, readonly reason: string) {
    super(`cannot reach the frontend at ${url}: ${reason}`);
    this.name = 'FrontendUnreachableError';
  }
}

/** The frontend answered with an HTTP error, or an error inside the stream. */
export class FrontendHttpError extends Error {
  constructor(readonly url: string, readonly status: number | null, readonly detail: string) {
    super(status === null ? `${url}: ${detail}` : `${url} answered HTTP ${status}: ${detail}`);
    this.name = 'FrontendHttpError';
  }
}

/** The caller aborted the request (its signal fired): not the frontend's fault. */
export class RequestAbortedError extends Error {
  constructor(readonly url: string) {
    super(`${url}: request aborted`);
    this.name = 'RequestAbortedError';
  }
}

/** No complete answer within the timeout. */
export class FrontendTimeoutError extends Error {
  constructor(readonly url: string, readonly timeoutMs: number) {
    super(`${url}: no complete answer within ${Math.round(timeoutMs / 1000)} s`);
    this.name = 'FrontendTimeoutError';
  }
}

const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/** fetch() hides the socket error in `cause` (and `cause.errors` for dual-stack attempts). */
export function describeFetchError(err: unknown, url?: string): string {
  const e = err as { cause?: { code?: string; message?: string; errors?: { code?: string }[] }; message?: string };
  const code = e?.cause?.code ?? e?.cause?.errors?.find((x) => x.code)?.code;
  if (code && CAUSES[code]) return CAUSES[code];
  if (code) return code;
  const msg = e?.cause?.message ?? e?.message ?? String(err);
  // fetch refuses the WHATWG "bad ports" (1, 22, 25, 6000, ...) before connecting: say which and why.
  if (msg === 'bad port') {
    const port = url ? safePort(url) : null;
    return `fetch refuses to connect to port ${port ?? '?'} (a port browsers and Node block); serve the frontend on another port`;
  }
  return msg;
}

function safePort(url: string): string | null {
  try {
    const u = new URL(url);
    return u.port || (u.protocol === 'https:' ? '443' : '80');
  } catch {
    return null;
  }
}

function isAbort(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** Strips a trailing slash so `${base}/v1/...` is well formed. */
export function normalizeBaseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * One deadline for a whole exchange (headers and body) plus the caller's cancel. Built by hand
 * rather than with AbortSignal.any, which Node 20.0-20.2 lack.
 */
class Deadline {
  private readonly ctl = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onCancel = () => this.ctl.abort();
  readonly signal = this.ctl.signal;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly cancel?: AbortSignal,
  ) {
    this.timer = setTimeout(() => this.ctl.abort(), timeoutMs);
    if (cancel?.aborted) this.ctl.abort();
    else cancel?.addEventListener('abort', this.onCancel, { once: true });
  }

  /** The typed error for a failure of this exchange, or null when it was not an abort. */
  abortError(err: unknown): Error | null {
    if (!isAbort(err) && !this.signal.aborted) return null;
    return this.cancel?.aborted ? new RequestAbortedError(this.url) : new FrontendTimeoutError(this.url, this.timeoutMs);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.cancel?.removeEventListener('abort', this.onCancel);
  }
}

async function request(url: string, init: RequestInit, deadline: Deadline): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: deadline.signal });
  } catch (err) {
    throw deadline.abortError(err) ?? new FrontendUnreachableError(url, describeFetchError(err, url));
  }
}

/**
 * The server's error message on ONE line: the OpenAI-style JSON error when there is one; for a
 * web page (some other server on that port) its <title>, else the status text; other text with
 * whitespace collapsed, cut to 200 characters.
 */
export function errorDetailFrom(text: string, statusText: string): string {
  try {
    const doc = parseServerJson(text) as { error?: { message?: string } | string; message?: string; detail?: string };
    const e = doc.error;
    const msg = typeof e === 'string' ? e : e?.message ?? doc.message ?? doc.detail;
    if (msg) return oneLine(String(msg));
  } catch {
    /* not JSON: show the text */
  }
  const t = text.trim();
  if (/^<(?:!doctype|html|head|body|\?xml)/i.test(t)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(t)?.[1];
    return oneLine(title?.trim() || statusText || 'an HTML page');
  }
  return oneLine(t) || statusText;
}

const oneLine = (s: string) => {
  const flat = cleanText(s).replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
};

/** An error page is read only as far as a message needs (64 KiB). */
async function errorDetail(res: Response): Promise<string> {
  return errorDetailFrom(await readCapped(res, 64 * 1024).catch(() => ''), cleanText(res.statusText));
}

/** GET /v1/models: the listed model ids, in the frontend's order. */
export async function listModels(baseUrl: string, timeoutMs: number, signal?: AbortSignal): Promise<string[]> {
  const url = `${normalizeBaseUrl(baseUrl)}/v1/models`;
  const deadline = new Deadline(url, timeoutMs, signal);
  try {
    const res = await request(url, { method: 'GET' }, deadline);
    if (!res.ok) throw new FrontendHttpError(url, res.status, await errorDetail(res));
    let doc: { data?: { id?: unknown }[] };
    try {
      doc = parseServerJson(await readCapped(res)) as typeof doc;
    } catch (err) {
      if (err instanceof BodyTooLargeError) throw new FrontendHttpError(url, res.status, err.message);
      throw deadline.abortError(err) ?? new FrontendHttpError(url, res.status, 'the answer is not JSON');
    }
    if (!doc || typeof doc !== 'object' || !Array.isArray(doc.data)) {
      throw new FrontendHttpError(url, res.status, 'the answer is not an OpenAI model list');
    }
    return modelIdsOf(doc);
  } finally {
    deadline.dispose();
  }
}

/** One streaming chat completion, one user message; resolves once the stream ends. */
export async function streamChat(req: ChatStreamRequest, now: () => number = () => performance.now()): Promise<ChatStreamResult> {
  const url = `${normalizeBaseUrl(req.baseUrl)}/v1/chat/completions`;
  const body = {
    model: req.model,
    messages: [{ role: 'user', content: req.prompt }],
    stream: true,
    max_tokens: req.maxTokens,
    temperature: 0,
    // usage (with cached_tokens) comes only in a final chunk, and only when asked for (FACTS §4)
    stream_options: { include_usage: true },
    nvext: { extra_fields: ['worker_id'] },
  };
  const deadline = new Deadline(url, req.timeoutMs, req.signal);
  try {
    return await exchange(url, body, deadline, now);
  } finally {
    deadline.dispose();
  }
}

async function exchange(url: string, body: unknown, deadline: Deadline, now: () => number): Promise<ChatStreamResult> {
  const t0 = now();
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
  }, deadline);
  if (!res.ok) throw new FrontendHttpError(url, res.status, await errorDetail(res));
  if (!res.body) throw new FrontendHttpError(url, res.status, 'empty response body');

  let ttftMs: number | null = null;
  let firstEventMs: number | null = null;
  let cachedTokens: number | null = null;
  let promptTokens: number | null = null;
  let workerId: string | null = null;
  let done = false;
  const sse = new SseDecoder(MAX_BODY_BYTES);
  const text = new TextDecoder();
  // An answer of MAX_TOKENS tokens is a few KB: a stream past the cap is not one (an endless
  // stream must cost neither memory nor the whole timeout).
  let bytes = 0;
  const handle = (data: string) => {
    const info = interpretChunk(data);
    if (info.error) throw new FrontendHttpError(url, null, info.error);
    if (info.done) {
      done = true;
      return;
    }
    const t = now() - t0;
    firstEventMs ??= t;
    if (info.hasToken && ttftMs === null) ttftMs = t;
    if (info.cachedTokens !== null) cachedTokens = info.cachedTokens;
    if (info.promptTokens !== null) promptTokens = info.promptTokens;
    workerId ??= info.workerId;
  };
  const reader = res.body.getReader();
  try {
    while (!done) {
      const { value, done: eof } = await reader.read();
      if (eof) {
        for (const ev of sse.push(text.decode())) handle(ev.data);
        for (const ev of sse.end()) handle(ev.data);
        break;
      }
      bytes += value.byteLength;
      if (bytes > MAX_BODY_BYTES) throw new FrontendHttpError(url, res.status, `the stream went past ${MAX_BODY_BYTES / (1024 * 1024)} MiB without ending; not a chat completion`);
      for (const ev of sse.push(text.decode(value, { stream: true }))) {
        handle(ev.data);
        if (done) break;
      }
    }
  } catch (err) {
    if (err instanceof FrontendHttpError) throw err;
    if (err instanceof SseTooLargeError) throw new FrontendHttpError(url, res.status, err.message);
    throw deadline.abortError(err) ?? new FrontendHttpError(url, res.status, `stream broke off: ${describeFetchError(err, url)}`);
  } finally {
    reader.cancel().catch(() => {});
  }
  const totalMs = now() - t0;
  if (firstEventMs === null) throw new FrontendHttpError(url, res.status, 'the stream ended without any chunk');
  return { ttftMs: ttftMs ?? firstEventMs, totalMs, cachedTokens, workerId, promptTokens };
}
