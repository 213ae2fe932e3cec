import { chooseFix } from './choose-fix.js';
import { isEngineCoreLine, normalizeLine, parseKvTokens } from './line.js';
import { NeedleSearch, newMatches, type Needle } from './needle-search.js';
import { NEEDLE_WINDOWS } from './needle-windows.js';
import { SEVERITY_RANK, SIGNATURES, type SignatureSpec } from './signatures.js';
import { TYPICAL_LINES } from './typical-lines.js';
import type { FileFinding, Finding, ScanResult } from './types.js';

// The finding accumulator (pure): fed raw lines, keeps per file and code the count and the first
// occurrence, and per file the last KV size. No I/O: src/host/logs/log-scan.ts streams files into it.

/**
 * Lines where a Dynamo worker names its own worker id (no finding: what a router diagnostic's
 * `worker_id=N` is matched against). Seen in ai-dynamo 1.6.1: the mocker logs
 * `dynamo_llm::fpm_publisher: FPM direct publisher started worker_id=N` (and, publishing KV events,
 * `Initializing KvEventPublisher for worker N`, `WorkerKvQuery endpoint starting for worker N`);
 * dynamo/vllm/instrumented_scheduler.py logs `InstrumentedScheduler: ZMQ PUB bound on ... (worker_id=N,
 * dp_rank=R)` when forward-pass metrics are on. A vLLM worker without these lines stays unnamed.
 */
export const WORKER_ID_NEEDLES: readonly string[] = [
  'FPM direct publisher started', 'InstrumentedScheduler: ZMQ PUB bound', 'Initializing KvEventPublisher for worker', 'WorkerKvQuery endpoint starting for worker',
];
const OWN_ID = /(?:\bworker_id=|\bfor worker )(\d{4,})/;
/** Ids kept per file and finding: enough for any one-GPU run, bounded for a hostile log. */
const MAX_IDS = 32;

/** The bit a line gets for holding a needle of SIGNATURES[i] is 1 << i (fewer than 30 signatures: scanner.test.ts); this one for a worker-id needle. */
const WORKER_ID_BIT = 1 << 30;

/** Every needle of the scan with its bits. */
export const SCAN_NEEDLES: readonly Needle[] = [
  ...SIGNATURES.flatMap((s, i) => s.needles.map((text) => ({ text, mask: 1 << i }))),
  ...WORKER_ID_NEEDLES.map((text) => ({ text, mask: WORKER_ID_BIT })),
];

/**
 * The prefilter: a line that holds none of the needles cannot match any pattern (each pattern's
 * match contains one of its signature's needles), and the needles it holds say which signatures
 * to try. One search over the bytes finds them all (needle-search.ts).
 */
export const NEEDLE_SEARCH = new NeedleSearch(SCAN_NEEDLES, TYPICAL_LINES.join('\n'), NEEDLE_WINDOWS);

const lineMatches = newMatches(16);

/** Which needles a single line holds, as the OR of their bits (0: none). */
function needleBits(raw: string): number {
  const buf = Buffer.from(raw, 'utf8');
  let bits = 0;
  const n = NEEDLE_SEARCH.search(buf, 0, buf.length, lineMatches);
  for (let i = 0; i < n; i++) bits |= lineMatches.bits[i];
  return bits;
}

/** Longest text kept for a finding's line (JSON lines can be long). */
export const MAX_TEXT = 500;

export interface LineMatch {
  signature: SignatureSpec;
  /** The normalised line. */
  text: string;
}

/** The first signature (table order) a raw line matches, or null. */
export function matchLine(raw: string): LineMatch | null {
  const bits = needleBits(raw);
  return bits === 0 ? null : matchCandidate(raw, bits);
}

function containsAny(text: string, needles: readonly string[]): boolean {
  // Stryker disable next-line EqualityOperator,ConditionalExpression: a speed-only pre-check (needles[length] is undefined, found in no line); the patterns decide every match
  for (let i = 0; i < needles.length; i++) if (text.includes(needles[i])) return true;
  // Stryker disable next-line BooleanLiteral: as above: with true every signature's patterns are tried, and they decide
  return false;
}

/** matchLine for a line holding the needles `bits` says. */
function matchCandidate(raw: string, bits: number): LineMatch | null {
  const text = normalizeLine(raw);
  // A pattern can only match where one of its signature's needles is (signatures.ts), so only the
  // signatures whose needles the line holds are tried. The bits come from the raw line: they hold
  // for the text when it is a piece of the raw line (no colour code or JSON turned into text).
  const known = text === raw || raw.includes(text);
  for (let i = 0; i < SIGNATURES.length; i++) {
    const signature = SIGNATURES[i];
    // Stryker disable next-line ConditionalExpression: without the pre-check every pattern is tried, and the patterns decide
    if (known ? (bits & (1 << i)) === 0 : !containsAny(text, signature.needles)) continue;
    for (const p of signature.patterns) {
      if (p.test(text)) return { signature, text };
    }
  }
  return null;
}

export interface Hit {
  count: number;
  line: number;
  text: string;
  /** The quoted line came from the engine core (signatures quoting 'last-engine'). */
  engine?: boolean;
  /** `worker_id=N` fields of its lines. */
  ids?: Set<string>;
}

/** What a scan found in one file (a Scanner's per-file state; structured-cloneable, so a worker thread can hand over its part). */
export interface FileState {
  hits: Map<string, Hit>;
  kvTokens: number | null;
  /** Worker ids the file's process announced as its own. */
  ids?: Set<string>;
}

const addIds = (set: Set<string>, ids: Iterable<string>) => {
  for (const id of ids) if (set.size < MAX_IDS) set.add(id);
};

const NAMED = 'worker_id=';
const isDigit = (c: number) => c >= 48 && c <= 57;
const isWordChar = (c: number) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/**
 * The ids of a line's `worker_id=N` fields (N of 4 digits or more, the field not the tail of a longer
 * word: /\bworker_id=(\d{4,})/g). Searched with indexOf, not a regex: a KV router logs such a line
 * per request, and a regex's match arrays cost more than the search.
 */
function addNamedIds(set: Set<string>, text: string): void {
  for (let at = text.indexOf(NAMED); at !== -1 && set.size < MAX_IDS; at = text.indexOf(NAMED, at + 1)) {
    if (at > 0 && isWordChar(text.charCodeAt(at - 1))) continue;
    const from = at + NAMED.length;
    let end = from;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    if (end - from >= 4) set.add(text.slice(from, end));
  }
}

const clip = (s: string) => (s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT - 1)}…` : s);

export class Scanner {
  private readonly perFile = new Map<string, FileState>();
  private bytes = 0;
  private readonly lineCounts: Record<string, number> = {};

  /** Declares a file (so a file without findings still counts and gets a kvTokens entry). */
  addFile(file: string): void {
    if (!this.perFile.has(file)) this.perFile.set(file, { hits: new Map(), kvTokens: null });
  }

  addBytes(n: number): void {
    this.bytes += n;
  }

  /** How many lines a file had, once it is read whole. */
  setLines(file: string, n: number): void {
    this.lineCounts[file] = n;
  }

  /** One raw line (without its newline); lineNo counts from 1. */
  feed(file: string, lineNo: number, raw: string): void {
    const bits = needleBits(raw);
    if (bits !== 0) this.feedCandidate(file, lineNo, raw, bits);
  }

  /** feed() for a line that holds the needles `bits` says (NEEDLE_SEARCH over its whole chunk found them). */
  feedCandidate(file: string, lineNo: number, raw: string, bits: number): void {
    if ((bits & WORKER_ID_BIT) !== 0) {
      const own = OWN_ID.exec(normalizeLine(raw));
      if (own) {
        this.addFile(file);
        addIds((this.perFile.get(file)!.ids ??= new Set()), [own[1]]);
      }
    }
    const m = matchCandidate(raw, bits);
    if (!m) return;
    this.addFile(file);
    const state = this.perFile.get(file)!;
    const code = m.signature.code;
    if (code === 'vllm.kv-size') {
      const tokens = parseKvTokens(m.text);
      if (tokens !== null) state.kvTokens = tokens;
    }
    const hit = state.hits.get(code);
    if (m.signature.quote === 'last-engine') {
      // The last exception, the engine core's before the worker's (its traceback ends in EngineDeadError).
      const engine = isEngineCoreLine(raw);
      if (!hit) state.hits.set(code, { count: 1, line: lineNo, text: clip(m.text.trim()), engine });
      else {
        hit.count++;
        if (engine || !hit.engine) {
          hit.line = lineNo;
          hit.text = clip(m.text.trim());
          hit.engine = engine;
        }
      }
    } else if (hit) hit.count++;
    else state.hits.set(code, { count: 1, line: lineNo, text: clip(m.text.trim()) });
    // A router diagnostic names the worker it is about: every line's id is kept, not only the quoted one's.
    if (m.text.includes(NAMED)) addNamedIds((state.hits.get(code)!.ids ??= new Set()), m.text);
  }

  /** What this scanner found in `file` so far (undefined for a file it never saw). */
  fileState(file: string): FileState | undefined {
    return this.perFile.get(file);
  }

  /**
   * Adds what another scanner found in the rest of `file` (its lines numbered from 1 again), as if
   * this scanner had been fed those lines after `lineOffset` lines: counts add up, the first
   * occurrence stays, the last KV size and the last engine quote win as a single pass decides them.
   */
  mergeFile(file: string, later: FileState, lineOffset: number): void {
    this.addFile(file);
    const state = this.perFile.get(file)!;
    if (later.kvTokens !== null) state.kvTokens = later.kvTokens;
    if (later.ids) addIds((state.ids ??= new Set()), later.ids);
    for (const [code, h] of later.hits) {
      const hit = state.hits.get(code);
      const moved: Hit = { ...h, line: h.line + lineOffset, ...(h.ids ? { ids: new Set(h.ids) } : {}) };
      if (!hit) {
        state.hits.set(code, moved);
        continue;
      }
      hit.count += h.count;
      // feedCandidate's rule for 'last-engine' quotes, applied to the later part's choice.
      if (SIGNATURES.find((x) => x.code === code)!.quote === 'last-engine' && (h.engine || !hit.engine)) {
        Object.assign(hit, { line: moved.line, text: moved.text, engine: moved.engine });
      }
      if (h.ids) addIds((hit.ids ??= new Set()), h.ids);
    }
  }

  result(): ScanResult {
    const merged = new Map<string, Finding>();
    const kvTokens: Record<string, number | null> = {};
    const byFile: Record<string, FileFinding[]> = {};
    const workerIds: Record<string, string[]> = {};
    const order = new Map(SIGNATURES.map((s, i) => [s.code, i]));
    for (const [file, state] of this.perFile) {
      kvTokens[file] = state.kvTokens;
      if (state.ids) workerIds[file] = [...state.ids];
      const own: FileFinding[] = (byFile[file] = []);
      const present = new Set(state.hits.keys());
      for (const [code, hit] of state.hits) {
        const sig = SIGNATURES.find((s) => s.code === code)!;
        if (isExplained(sig, present)) continue;
        own.push({ code, severity: sig.severity, count: hit.count, line: hit.line, text: hit.text, ...(hit.ids ? { workerIds: [...hit.ids] } : {}) });
        const f = merged.get(code);
        if (f) f.count += hit.count;
        else {
          merged.set(code, {
            code, severity: sig.severity, count: hit.count, file, line: hit.line, text: hit.text,
            // The fix the quoted line calls for; a run's context (diagnose of a run's logs) may choose again.
            explanation: sig.explanation, fix: chooseFix(code, hit.text, sig.fix),
          });
        }
      }
    }
    const rank = (a: { severity: FileFinding['severity']; code: string }, b: { severity: FileFinding['severity']; code: string }) =>
      SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || order.get(a.code)! - order.get(b.code)!;
    for (const list of Object.values(byFile)) list.sort(rank);
    const findings = [...merged.values()].sort(rank);
    return {
      files: this.perFile.size, bytes: this.bytes, findings, kvTokens, byFile, lines: { ...this.lineCounts },
      ...(Object.keys(workerIds).length > 0 ? { workerIds } : {}),
    };
  }
}

/**
 * A symptom is dropped for a file when a code that explains it was found in the same file; a
 * fallback (Rust panic, generic exception, bare ERROR line) when any specific cause was, or a
 * fallback of a lower rank. Fallbacks themselves explain '*' symptoms.
 */
function isExplained(sig: SignatureSpec, present: Set<string>): boolean {
  if (!sig.symptomOf && !sig.fallback) return false;
  if (sig.fallback || sig.symptomOf === '*') {
    for (const code of present) {
      // Stryker disable next-line ConditionalExpression: the signature itself is a fallback or a '*' symptom, skipped by the checks below
      if (code === sig.code) continue;
      const other = SIGNATURES.find((s) => s.code === code);
      if (!other || other.severity !== 'error' || isSymptomHere(other, present)) continue;
      if (sig.fallback && other.fallback && other.fallback >= sig.fallback) continue;
      return true;
    }
    return false;
  }
  // Stryker disable next-line MethodExpression: every symptomOf list is small; some and every agree where it holds one code
  return sig.symptomOf!.some((c) => present.has(c));
}

/** A code that is a mere consequence in this file: a '*' symptom, or one whose named cause is present. */
function isSymptomHere(sig: SignatureSpec, present: Set<string>): boolean {
  return sig.symptomOf === '*' || (sig.symptomOf !== undefined && sig.symptomOf.some((c) => present.has(c)));
}

/** Scans a whole text at once (tests, small inputs). */
export function scanText(file: string, text: string): ScanResult {
  const s = new Scanner();
  s.addFile(file);
  s.addBytes(Buffer.byteLength(text));
  const lines = text.split('\n');
  // Stryker disable next-line ConditionalExpression,EqualityOperator: split always returns at least one element
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  lines.forEach((l, i) => s.feed(file, i + 1, l));
  s.setLines(file, lines.length);
  return s.result();
}
