import { KV_LINE_PATTERN } from '../plan/types.js';
// Line normalisation for log scanning (pure). Real logs carry colour codes, CRLF, process prefixes
// added by vLLM's multiprocessing and docker compose, and JSON lines from Dynamo's Rust tracing
// (DYN_LOGGING_JSONL=1). Patterns are matched against the text this module returns.

// CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks).
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

// docker compose: `worker-1  | ` (v2) or `worker_1  | ` (v1): a service name with a replica number.
const COMPOSE_PREFIX = /^[A-Za-z0-9][\w.-]*[-_]\d+\s+\| ?/;

// Prefixes a collector puts in front of the program's own line; the root error line hides behind
// them (an uncaught exception must start its line). Each is stripped where the line starts with it:
// - an RFC 3339 timestamp and one space: `docker logs --timestamps` (`2025-01-01T00:00:00.123456789Z`),
//   GitHub Actions / Azure Pipelines raw logs (`2021-03-06T10:08:42.4803870Z`), and Buildkite's
//   bracketed `[2026-02-24T20:21:58Z] ` (vLLM's and PyTorch's CI). Not when a log level follows
//   (other than vLLM's `LEVEL MM-DD HH:MM:SS`): then it is the program's own timestamp (Dynamo's
//   tracing lines), which stays in the quote.
// - journald's short format: `Jan 28 10:40:07 HOST IDENT[PID]: ` (journalctl -o short, syslog).
// - kubectl logs --prefix: `[pod/NAME/CONTAINER] `.
const OUTER_TIMESTAMP = /^\[?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]? (?!\s*(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL)\b(?! \d\d-\d\d ))/;
const JOURNALD = /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [^\s:[\]]+(?:\[\d+\])?: /;
const KUBECTL = /^\[pod\/[^/\]\s]+\/[^\]\s]+\] /;

// vLLM subprocess prefixes (FACTS §3): `(EngineCore pid=1309) `, `(EngineCore_DP0 pid=1309) `,
// `(VllmWorker rank=0 pid=1309) `, `(APIServer pid=1309) `, and Ray's `(RayWorkerWrapper pid=206994,
// ip=192.168.10.25) `. Requiring `pid=` keeps ordinary parenthesised text intact.
const PROCESS_PREFIX = /^\([A-Za-z][\w-]*(?: [A-Za-z_]+=[\w-]+)* pid=\d+(?:, [A-Za-z_]+=[\w.:-]+)*\)\s*/;

export function stripAnsi(s: string): string {
  // Stryker disable next-line StringLiteral: includes('') holds for every string, and the replace then finds nothing to strip: the same text
  return s.includes('\x1b') ? s.replace(ANSI, '') : s;
}

/** Removes the collectors' prefixes (timestamps, journald, kubectl, compose), in any nesting. */
function stripOuter(s: string): string {
  let out = s;
  // A few at most: `docker logs -t` of a compose service, kubectl of a timestamped container.
  for (let i = 0; i < 4; i++) {
    const c = out.charCodeAt(0);
    // Stryker disable next-line ConditionalExpression: speed only: each pattern checks its own first character
    const m = c === 91 /* [ */ ? (KUBECTL.exec(out) ?? OUTER_TIMESTAMP.exec(out))
      : c >= 48 && c <= 57 ? OUTER_TIMESTAMP.exec(out)
        : c >= 65 && c <= 90 ? JOURNALD.exec(out)
          : null;
    const compose = m ? null : out.includes('|') ? COMPOSE_PREFIX.exec(out) : null;
    const cut = m ?? compose;
    if (!cut) break;
    out = out.slice(cut[0].length);
  }
  return out;
}

/** Removes the prefixes real logs carry (collectors' first, then any process prefixes). */
export function stripPrefixes(s: string): string {
  let out = stripOuter(s);
  // Nested prefixes happen (a worker's engine core under compose); strip a few at most.
  // Stryker disable next-line StringLiteral: startsWith('') runs the loop once more, where PROCESS_PREFIX fails and breaks: the same text
  for (let i = 0; i < 3 && out.startsWith('('); i++) {
    const m = PROCESS_PREFIX.exec(out);
    if (!m) break;
    out = out.slice(m[0].length);
  }
  return out;
}

const ENGINE_CORE_PREFIX = /^\(EngineCore[\w-]*(?: [A-Za-z_]+=[\w-]+)* pid=\d+\)/;

/** The line was written by vLLM's engine core process (`(EngineCore_DP0 pid=N) ...`), inside a worker's log. */
export function isEngineCoreLine(raw: string): boolean {
  return ENGINE_CORE_PREFIX.test(stripOuter(stripAnsi(raw)));
}

const TRACING_KEYS = new Set(['timestamp', 'time', 'ts', 'level', 'target', 'message', 'msg', 'fields', 'span', 'spans']);

function fieldText(v: unknown): string {
  // Stryker disable next-line ConditionalExpression: JSON.stringify of a parsed number, boolean or null is its String(): the same text
  if (typeof v === 'string') return JSON.stringify(v);
  // Stryker disable next-line ConditionalExpression,LogicalOperator: as above; only objects differ, and those mutants are killed (log-line-shapes.test.ts)
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/**
 * A JSON-lines record (Rust tracing JSON: flat `message` plus fields, or tracing-subscriber's
 * nested `fields.message`; Python loggers often use `msg`) as the text line the plain format
 * would have printed: `TIME  LEVEL target: message key=value ...`. null when not a JSON object.
 */
export function jsonLineToText(s: string): string | null {
  const t = s.trimStart();
  // Stryker disable next-line ConditionalExpression,StringLiteral: speed only: text not starting with '{' parses to a non-object or throws, and both return null below
  if (!t.startsWith('{')) return null;
  let rec: unknown;
  try {
    rec = JSON.parse(t);
  }
  // Stryker disable next-line BlockStatement: without the return, rec stays undefined and the check below returns null all the same
  catch {
    return null;
  }
  // Stryker disable next-line ConditionalExpression,LogicalOperator: text that starts with '{' parses to an object or throws: this only narrows the type
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) return null;
  const r = rec as Record<string, unknown>;
  const nested = r.fields !== null && typeof r.fields === 'object' && !Array.isArray(r.fields) ? (r.fields as Record<string, unknown>) : {};
  const message = r.message ?? r.msg ?? nested.message ?? '';
  const head = [r.timestamp ?? r.time ?? r.ts, r.level, r.target === undefined ? undefined : `${String(r.target)}:`]
    .filter((x) => x !== undefined && x !== null && x !== '')
    .map(String);
  const kv: string[] = [];
  for (const [k, v] of Object.entries(nested)) if (k !== 'message') kv.push(`${k}=${fieldText(v)}`);
  for (const [k, v] of Object.entries(r)) if (!TRACING_KEYS.has(k)) kv.push(`${k}=${fieldText(v)}`);
  const text = [head.join(' '), stripAnsi(String(message)), kv.join(' ')].filter((x) => x !== '').join(' ');
  return text;
}

/** The text patterns are matched against: no CR, no colour codes, no prefixes, JSON turned into text. */
export function normalizeLine(raw: string): string {
  let s = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  s = stripAnsi(s);
  s = stripPrefixes(s);
  const json = jsonLineToText(s);
  return json ?? s;
}

// The GPU line, or the CPU build's (`CPU KV cache size: ...`, FACTS §10): the same count.
const KV_SIZE = new RegExp(KV_LINE_PATTERN.replace(/^GPU /, '[GC]PU '));

/** "14,816" -> 14816 (vLLM prints thousands separators). */
export function parseTokenCount(text: string): number | null {
  const digits = text.replace(/[,_\s]/g, '');
  // Number('') is 0: a count made only of separators or blanks is no count.
  const n = Number(digits);
  return digits !== '' && Number.isFinite(n) && n >= 0 ? n : null;
}

/** `GPU KV cache size: 14,816 tokens` (also the combined line with "Maximum concurrency") -> 14816. */
export function parseKvTokens(text: string): number | null {
  const m = KV_SIZE.exec(text);
  return m ? parseTokenCount(m[1]) : null;
}
