import { getJson, modelIdsOf, modelReadinessOf, postJson, workerInstancesOf } from '../host/net/http.js';
import type { HttpProbe } from '../host/types.js';
import { parseTokenCount, stripAnsi } from '../diagnose/line.js';
import { realClock, type Clock } from './clock.js';

// What "ready" means, as pure judgements of one log line or one HTTP answer, plus a bounded
// short-interval poll. The supervisor follows logs and calls these; nothing here sleeps seconds.

export { parseTokenCount, stripAnsi };

/**
 * Lines that show the engine is past start-up and loading (the view's "loading" state). Only lines
 * the engines really print (FACTS §4): vLLM's `Resolved architecture: ...`, `Starting to load
 * model ...`, `Loading weights took ...`, `Model loading took ...`; the mocker's
 * `Creating mocker engine with config: ...` (dynamo_llm::mocker, INFO, seen in 1.6.1's log and
 * checked against the real mocker by test/dynamo). Dynamo logs no "Starting vLLM worker" line.
 */
const LOADING = /Resolved architecture: |Starting to load model |Loading weights took |Model loading took |Creating mocker engine with config/;

/** Python logging levels above INFO: vLLM then never prints its INFO "GPU KV cache size" line (FACTS §4). */
const HIDES_INFO = new Set(['WARN', 'WARNING', 'ERROR', 'CRITICAL', 'FATAL']);

/**
 * The VLLM_LOGGING_LEVEL that hides the KV line readiness waits for, or null. vLLM logs
 * `GPU KV cache size: N tokens` once, at INFO, from the EngineCore process
 * (vllm/v1/core/kv_cache_utils.py, `logger.info_once`; the level is VLLM_LOGGING_LEVEL, vllm/envs.py).
 */
export function kvLineHiddenBy(env: Readonly<Record<string, string | undefined>>): string | null {
  const level = env.VLLM_LOGGING_LEVEL?.trim();
  return level && HIDES_INFO.has(level.toUpperCase()) ? level : null;
}

/** huggingface_hub / filelock while another process holds the download lock (FACTS §6; older builds lowercase). */
const LOCK_WAIT = /still waiting to acquire lock on (\S+?)(?: \(elapsed: ([\d.]+) seconds\))?\s*$/i;

export type LineSignal =
  | { kind: 'kv'; tokens: number }
  | { kind: 'loading' }
  | { kind: 'lock-wait'; lockPath: string; elapsedS: number | null }
  | { kind: 'model-error'; error: string }
  | null;

/**
 * The frontend cannot read a file of the model (ai-dynamo 1.6.1's frontend logs, and retries with
 * a doubling delay forever: test/fixtures/samples/logs/frontend-1.6.1-model-materialization-failed.log):
 *   WARN dynamo_llm::discovery::controller: Model materialization failed; scheduling retry group=[...]
 *   attempt=1 retry_ms=1000 error="tokenizer: /root/.cache/dynamo/mdc/.../tokenizer.json: EOF while parsing a value at line 7 column 11"
 * A retry cannot mend a file that does not parse (serde_json's messages: EOF while parsing,
 * expected ..., invalid ..., trailing ..., key must be a string, control character ...), nor one
 * that is not there: those are fatal; any other materialization error may be passing (kept waiting).
 */
const MATERIALIZATION_FAILED = /Model materialization failed\b.*?\berror="?(.*?)"?\s*$/;
const UNMENDABLE = /: (EOF while parsing|expected |invalid |trailing |key must be a string|control character|No such file|missing field)/;

/** The plan's ready.logPattern (group 1: token count with thousands separators). */
export function compileLogPattern(source: string): RegExp {
  return new RegExp(source);
}


/** Classifies one log line (ANSI stripped first: vLLM colours its prefixes unless NO_COLOR). */
export function classifyLine(raw: string, kvPattern: RegExp | null): LineSignal {
  const line = stripAnsi(raw);
  if (kvPattern) {
    const m = kvPattern.exec(line);
    if (m) {
      // Stryker disable next-line StringLiteral: equivalent: a pattern without group 1 gives no count, and parseTokenCount of any text without digits is null as of ''
      const tokens = parseTokenCount(m[1] ?? '');
      if (tokens !== null) return { kind: 'kv', tokens };
    }
  }
  const mat = MATERIALIZATION_FAILED.exec(line);
  if (mat && UNMENDABLE.test(mat[1])) return { kind: 'model-error', error: mat[1] };
  const lock = LOCK_WAIT.exec(line);
  if (lock) return { kind: 'lock-wait', lockPath: lock[1], elapsedS: lock[2] ? Number(lock[2]) : null };
  if (LOADING.test(line)) return { kind: 'loading' };
  return null;
}

const statusOf = (p: HttpProbe): string | null =>
  p.body !== null && typeof p.body === 'object' && typeof (p.body as { status?: unknown }).status === 'string'
    ? (p.body as { status: string }).status
    : null;

/** Worker system server: /health {"status":"ready"} (200); "notready" with 503 until then (FACTS §4). */
export const workerHealthy = (p: HttpProbe): boolean => statusOf(p) === 'ready';

/** Frontend /live {"status":"live"}. */
export const frontendLive = (p: HttpProbe): boolean => p.ok && (statusOf(p) === 'live' || statusOf(p) === null);

/** Frontend /health: "healthy" once a worker registered; may say "unhealthy" with HTTP 200 (read the JSON). */
export const frontendHealthy = (p: HttpProbe): boolean => statusOf(p) === 'healthy';

/** /v1/models lists the model. */
export const modelListed = (p: HttpProbe, model: string): boolean => p.ok && modelIdsOf(p.body).includes(model);

/** Workers the frontend counts in an answer: /v1/models/<model>/ready's worker counts, else /health's generate instances. */
export function workersSeen(p: HttpProbe | null): number | null {
  if (!p || p.body === null) return null;
  const r = modelReadinessOf(p.body);
  if (r) return r.ready ? r.workers : 0;
  return typeof p.body === 'object' && Array.isArray((p.body as { instances?: unknown }).instances) ? workerInstancesOf(p.body).length : null;
}

/** The frontend counts at least `want` workers (either answer above). */
export const workersCounted = (p: HttpProbe, want: number): boolean => p.ok && (workersSeen(p) ?? -1) >= want;

/** A chat completion was answered with at least one choice. */
export const completionAnswered = (p: HttpProbe): boolean =>
  p.ok && p.body !== null && typeof p.body === 'object' && Array.isArray((p.body as { choices?: unknown }).choices) &&
  (p.body as { choices: unknown[] }).choices.length > 0;

export interface PollOptions {
  intervalMs: number;
  /** Per-request timeout. */
  requestTimeoutMs: number;
  signal: AbortSignal;
  /** POST this JSON body instead of a GET. */
  body?: unknown;
  /** Sees every answer (the last one explains a wait that never ends). */
  onAnswer?: (p: HttpProbe) => void;
  /**
   * Back off: each answer that does not hold doubles the interval, up to this many ms. For servers
   * that log every answer they are not proud of (a worker's 503 "notready" is an ERROR line in its
   * own log, FACTS §10): fewer probes, fewer lines that are ours.
   */
  backoffToMs?: number;
}

/** One GET with a JSON answer; never throws (host/net/http.ts getJson is the real one). */
export type HttpGetter = (url: string, timeoutMs: number) => Promise<HttpProbe>;
/** One POST of a JSON body with a JSON answer; never throws (host/net/http.ts postJson). */
export type HttpPoster = (url: string, body: unknown, timeoutMs: number) => Promise<HttpProbe>;

/** What a poll touches, injectable so readiness runs in tests without a server or real waits. */
export interface PollDeps {
  get: HttpGetter;
  post?: HttpPoster;
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clear'>;
}

const realPollDeps: PollDeps = { get: getJson, post: postJson, clock: realClock };

/**
 * GETs url (or POSTs o.body) every intervalMs until judge(answer) holds; resolves with that answer.
 * Rejects with the signal's reason when aborted (the supervisor aborts on stop, failure and deadline).
 */
export async function pollHttp(url: string, judge: (p: HttpProbe) => boolean, o: PollOptions, deps: PollDeps = realPollDeps): Promise<HttpProbe> {
  const { clock } = deps;
  const post = deps.post ?? postJson;
  let interval = o.intervalMs;
  for (;;) {
    // Stryker disable next-line StringLiteral: equivalent: an aborted AbortSignal always has a reason (abort() without one sets an AbortError), so the fallback's message is never seen
    if (o.signal.aborted) throw o.signal.reason ?? new Error('aborted');
    const t0 = clock.now();
    const probe = o.body === undefined ? await deps.get(url, o.requestTimeoutMs) : await post(url, o.body, o.requestTimeoutMs);
    o.onAnswer?.(probe);
    if (judge(probe)) return probe;
    const wait = Math.max(0, interval - (clock.now() - t0));
    if (o.backoffToMs !== undefined) interval = Math.min(o.backoffToMs, Math.max(1, interval) * 2);
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clock.clear(t);
        // Stryker disable next-line StringLiteral: equivalent, as above
        reject(o.signal.reason ?? new Error('aborted'));
      };
      // Kept alive: a poll in progress is work the supervisor waits for.
      const t = clock.setTimeout(() => {
        o.signal.removeEventListener('abort', onAbort);
        resolve();
      }, wait, true);
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent: a signal aborts once, so a listener left after it never runs again (the timer's end removes it otherwise)
      o.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
