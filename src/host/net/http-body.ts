// Server text is untrusted: a body is read only up to a cap (a 1 GB /v1/models must not cost
// gigabytes of memory), and text taken from it is made printable before anyone prints it (raw
// escape sequences could rewrite the user's terminal).

/** The most any answer of a frontend or worker may take: real ones are a few KB. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${Math.round(limit / (1024 * 1024))} MiB; not a Dynamo answer`);
    this.name = 'BodyTooLargeError';
  }
}

/** The body as text, read in chunks and abandoned (the connection cancelled) past `limit` bytes. */
export async function readCapped(res: Response, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => {});
    throw new BodyTooLargeError(limit);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      n += value.byteLength;
      if (n > limit) throw new BodyTooLargeError(limit);
      chunks.push(value);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Unicode's bidirectional controls (embeddings, overrides, isolates, marks): printed, they reorder
 * what the terminal shows after them, so a server's text could make a line read otherwise than it
 * is ("Trojan Source", CVE-2021-42574).
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** CSI / OSC escape sequences, then any other C0/C1 control character, become nothing / one space; bidi controls go. */
export function cleanText(s: string): string {
  return s
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, '')
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(BIDI_CONTROLS, '');
}

/** Real answers nest a few levels; JSON.parse of 6 MB of `[[[[...` builds millions of arrays (~400 MB). */
export const MAX_JSON_DEPTH = 64;

/** True when arrays/objects in `text` nest deeper than `max` (strings skipped). One pass, no allocation. */
export function nestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** JSON.parse for server text: refuses nesting past MAX_JSON_DEPTH before parsing (throws SyntaxError). */
export function parseServerJson(text: string): unknown {
  if (nestsDeeperThan(text)) throw new SyntaxError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels: not a Dynamo answer`);
  return JSON.parse(text);
}

/** Every string in a parsed JSON value (keys too) made printable; the shape is kept. */
export function cleanDeep(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return cleanText(v);
  if (v === null || typeof v !== 'object' || depth > 64) return v;
  if (Array.isArray(v)) return v.map((x) => cleanDeep(x, depth + 1));
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [cleanText(k), cleanDeep(x, depth + 1)]));
}

/**
 * Pure: V8's JSON.parse message without the text it quotes ('Unexpected token 'p', "password=..."
 * is not valid JSON'): a result linked to someone's secret file must not print its first bytes.
 */
export function jsonErrorWithoutText(message: string): string {
  const first = message.split('\n')[0];
  const at = /at position (\d+)/.exec(first);
  if (/^Unexpected end of JSON input/.test(first)) return 'it ends early';
  if (/^Unexpected token/.test(first) || / is not valid JSON$/.test(first)) return at ? `invalid at byte ${at[1]}` : 'invalid from the first bytes';
  return first.replace(/"[^"]*"/g, '"…"');
}
