import { cleanText, parseServerJson } from './http-body.js';

// Pure parsing of an OpenAI-compatible streaming chat completion (server-sent events), as the
// Dynamo frontend sends it (FACTS §4): `data: {json}\n\n` chunks, then `data: [DONE]`; usage only
// in a final chunk with empty `choices` when the request asked for stream_options.include_usage;
// `nvext.worker_id` on the first chunk and the usage chunk when nvext.extra_fields has "worker_id".

export interface SseEvent {
  /** The `event:` field, null for the default message event. */
  event: string | null;
  data: string;
}

/**
 * Incremental SSE framing (the WHATWG event-stream rules the frontend's output needs): lines end
 * with \n, \r\n or \r; `data:` lines accumulate; a blank line dispatches; `:` lines are comments.
 * Text arrives in arbitrary network chunks, so a line (even a \r\n pair) may be split across pushes.
 */
/** An event (or a line) past the decoder's limit: the server is not sending chat chunks. */
export class SseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`an event of the stream is larger than ${Math.round(limit / (1024 * 1024))} MiB; not a chat completion chunk`);
    this.name = 'SseTooLargeError';
  }
}

export class SseDecoder {
  /** The line being assembled, in the pieces it arrived in: never concatenated (and so never
   *  copied) until it is complete, so a long line costs linear time. */
  private parts: string[] = [];
  private partChars = 0;
  /** The last piece ended with \r: a \n opening the next one belongs to it. */
  // Stryker disable next-line BooleanLiteral: equivalent, before the first push nothing is pending, so a skipped leading \n (a blank line) would dispatch nothing either
  private skipLf = false;
  private data: string[] = [];
  private dataChars = 0;
  private event: string | null = null;

  /** `limit`: the most characters one line or one event's data may hold (throws SseTooLargeError past it). */
  constructor(private readonly limit = Number.POSITIVE_INFINITY) {}

  /** Feeds decoded text; returns the events completed by it. Only the new text is searched. */
  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    if (this.skipLf && text.charCodeAt(0) === 10) start = 1;
    this.skipLf = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.parts.push(text.slice(start, i));
      this.line(this.parts.join(''), out);
      this.parts = [];
      this.partChars = 0;
      if (c === 13) {
        if (i + 1 === text.length) this.skipLf = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    if (start < text.length) {
      this.parts.push(text.slice(start));
      this.partChars += text.length - start;
      if (this.partChars > this.limit) throw new SseTooLargeError(this.limit);
    }
    return out;
  }

  /** End of stream: a last event without its blank line still counts (servers that close early). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.partChars > 0) this.line(this.parts.join(''), out);
    this.parts = [];
    this.partChars = 0;
    // Stryker disable next-line BooleanLiteral: equivalent, after end() nothing is pending, so a skipped leading \n (a blank line) would dispatch nothing either
    this.skipLf = false;
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join('\n') });
      this.data = [];
      this.dataChars = 0;
      this.event = null;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.dataChars += value.length + 1;
      if (this.dataChars > this.limit) throw new SseTooLargeError(this.limit);
      this.data.push(value);
    }
    else if (field === 'event') this.event = value;
  }
}

/** What one chunk tells the probe. */
export interface ChunkInfo {
  /** `data: [DONE]`. */
  done: boolean;
  /** The chunk carries generated text (the first such chunk marks the first token). */
  hasToken: boolean;
  /** From `usage` when present. */
  promptTokens: number | null;
  /** `usage.prompt_tokens_details.cached_tokens`; null when absent (older builds, no details). */
  cachedTokens: number | null;
  /** True when the chunk had a usage object at all (cachedTokens null then means "not reported"). */
  hasUsage: boolean;
  /** The worker that served the prompt: nvext.worker_id.prefill_worker_id, else decode_worker_id. */
  workerId: string | null;
  /** An error the server sent inside the stream. */
  error: string | null;
}

const EMPTY: ChunkInfo = {
  done: false, hasToken: false, promptTokens: null, cachedTokens: null, hasUsage: false, workerId: null, error: null,
};

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * Worker ids are u64: JSON.parse would round ids above 2^53, so take the digits from the raw text
 * when they are there, and fall back to the parsed value (numbers or strings).
 */
function workerIdFrom(raw: string, nvext: unknown): string | null {
  if (!nvext || typeof nvext !== 'object') return null;
  const w = (nvext as Record<string, unknown>).worker_id;
  if (w === undefined || w === null) return null;
  if (typeof w === 'number' || typeof w === 'string') {
    const m = /"worker_id"\s*:\s*"?(\d+)/.exec(raw);
    return m ? m[1] : cleanText(String(w)).slice(0, 64);
  }
  // Stryker disable next-line ConditionalExpression: equivalent, the only other JSON value left is a boolean, which has no prefill/decode id, so the loop returns null
  if (typeof w !== 'object') return null;
  const o = w as Record<string, unknown>;
  // The prefill worker holds the prompt's KV blocks (the cache a repeat can hit); in aggregated
  // serving only one id may be filled, so take whichever is present.
  for (const key of ['prefill_worker_id', 'decode_worker_id'] as const) {
    const v = o[key];
    if (v === null || v === undefined) continue;
    const m = new RegExp(`"${key}"\\s*:\\s*"?(\\d+)`).exec(raw);
    return m ? m[1] : cleanText(String(v)).slice(0, 64);
  }
  return null;
}

/** Why `o[key]` is no token count (a number below 0 or not whole), or null when it is one or absent. */
function badCount(o: Record<string, unknown> | null, key: string, label: string): string | null {
  const v = o?.[key];
  if (typeof v !== 'number' || (Number.isSafeInteger(v) && v >= 0)) return null;
  return `the frontend sent ${label} ${String(v)}, which is not a token count (a whole number >= 0)`;
}

/** Interprets one event's data. Unparseable data is reported as an error, never thrown. */
export function interpretChunk(data: string): ChunkInfo {
  const text = data.trim();
  if (text === '[DONE]') return { ...EMPTY, done: true };
  let doc: unknown;
  try {
    doc = parseServerJson(text);
  } catch {
    return { ...EMPTY, error: `unreadable stream chunk: ${cleanText(text.slice(0, 80))}` };
  }
  if (!doc || typeof doc !== 'object') return { ...EMPTY, error: `unexpected stream chunk: ${cleanText(text.slice(0, 80))}` };
  const d = doc as Record<string, unknown>;
  if (d.error !== undefined && d.error !== null) {
    const e = d.error as Record<string, unknown> | string;
    const msg = typeof e === 'string' ? e : String(e.message ?? JSON.stringify(e));
    return { ...EMPTY, error: cleanText(msg).slice(0, 500) };
  }
  let hasToken = false;
  if (Array.isArray(d.choices)) {
    for (const c of d.choices) {
      const delta = (c as Record<string, unknown> | null)?.delta as Record<string, unknown> | undefined;
      if (!delta) continue;
      // Reasoning models stream thinking first: that is still the first token.
      for (const key of ['content', 'reasoning_content', 'reasoning']) {
        const v = delta[key];
        if (typeof v === 'string' && v.length > 0) hasToken = true;
      }
    }
  }
  const usage = d.usage && typeof d.usage === 'object' ? (d.usage as Record<string, unknown>) : null;
  // Stryker disable next-line ConditionalExpression: equivalent, a JSON string, number or true has no cached_tokens property, so cachedTokens is null either way
  const details = usage?.prompt_tokens_details && typeof usage.prompt_tokens_details === 'object'
    ? (usage.prompt_tokens_details as Record<string, unknown>)
    : null;
  // A count the server sent that is no count (negative, fractional) is a broken answer, not "none".
  const bad = badCount(usage, 'prompt_tokens', 'usage.prompt_tokens') ?? badCount(details, 'cached_tokens', 'usage.prompt_tokens_details.cached_tokens');
  if (bad) return { ...EMPTY, hasUsage: true, error: bad };
  return {
    done: false,
    hasToken,
    promptTokens: usage ? num(usage.prompt_tokens) : null,
    cachedTokens: details ? num(details.cached_tokens) : null,
    hasUsage: usage !== null,
    workerId: workerIdFrom(text, d.nvext),
    error: null,
  };
}
