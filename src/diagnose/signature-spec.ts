import type { Signature } from './types.js';

// What a log signature is (the finding table of CLI.md, "Finding codes", is data: signatures.ts and
// signatures-crash.ts) and the line shapes several signatures share.

export interface SignatureSpec extends Signature {
  /**
   * Codes that explain this one when they appear in the same file: then this finding is a mere
   * consequence and is not reported for that file ('*' = any other error). "Engine core
   * initialization failed" follows every engine start failure; it is news only when nothing
   * else explains it.
   */
  symptomOf?: readonly string[] | '*';
  /**
   * Literal(s) a raw line must contain before the patterns are tried (each pattern's match must
   * contain one). Together they form the prefilter searched over whole chunks of bytes
   * (needle-search.ts): printable ASCII, at least 7 characters each ("supported HW", not "HW").
   */
  needles: readonly string[];
  /**
   * A last-resort cause: reported for a file only when no specific error explains it, nor a
   * fallback of a lower rank (1: a Rust panic, 2: an uncaught exception, 3: a bare ERROR line),
   * yet it explains the '*' symptoms (EngineDeadError) itself.
   */
  fallback?: 1 | 2 | 3;
  /**
   * Which occurrence a file's finding quotes: the first (default), or the last one, preferring the
   * engine core's lines (`(EngineCore... pid=N)`): the root cause of a crash is the engine's final
   * exception, while the worker's own traceback that follows only says the engine died.
   */
  quote?: 'first' | 'last-engine';
}

// The line shapes of an exception in vLLM's logs (vllm/v1/engine/core.py run_engine_core logs
// "EngineCore encountered a fatal error." with logger.exception, and vllm/logging_utils/formatter.py
// NewLineFormatter repeats the `ERROR MM-DD HH:MM:SS [core.py:710] ` prefix on every traceback line;
// multiprocessing then prints the re-raised exception bare). Only ERROR/CRITICAL records count:
// a warning that mentions an exception is no crash.

/** Order of severities in reports: errors first. */
export const SEVERITY_RANK = { error: 0, warn: 1, info: 2 } as const;

/** Lookahead alternatives (regex source) of ERROR lines healthy Dynamo frontends write: see log.error. */
export const BENIGN_ERRORS = [
  // The runtime's internal channels closing under its shutdown, in whatever words the task logs it.
  String.raw`dynamo_runtime::[\w:]+: .*\bchannel closed\b`,
  String.raw`dynamo_llm::http::service::service_v2: http response sent status=4\d\d\b`,
  // A worker's system server answering "notready" (503) to a /health or /live probe before it
  // registered: the prober's doing (dynamo-dev up polls it; so do orchestrators), not the worker's
  // failure (FACTS §10: `ERROR tower_http::trace::on_failure: response failed classification=Status
  // code: 503 Service Unavailable latency=0 ms`, one per request, seen on ai-dynamo 1.6.1).
  String.raw`tower_http::trace::on_failure: response failed classification=Status code: 503 Service Unavailable\b`,
];

export const LOGGED = String.raw`(?:(?:ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[^\]\s]+\] )?`;
/**
 * `RuntimeError: ...`, `torch.AcceleratorError: ...`, `vllm.v1.engine.exceptions.EngineDeadError: ...`, at the start of the
 * line; also Ray's wrapper of a worker's exception, `ray.exceptions.RayTaskError(ValueError): ...`.
 */
// Not a bare `Error: ...`: that is how a Rust program's main reports the error it returns (Dynamo's `Error: task 20
// panicked ...`), after the ERROR line that logged it.
export const exceptionLine = (names: string): RegExp => new RegExp(String.raw`^\s*${LOGGED}(?!Error: )(?:[A-Za-z_][\w]*\.)*(?:${names})(?:\([\w.]+\))?: \S`);

export const TEARDOWN = 'dynamo-dev teardown --orphans';
