import { normalizeLine } from '../diagnose/line.js';

// The message part of one log line, for the live view's last-line column: a narrow column has no
// room for what every line repeats (FACTS §3: `(EngineCore pid=N) INFO 10-07 05:12:18 [file.py:1]`,
// Dynamo's Rust tracing `2026-10-07T04:58:10.004410Z  INFO target::path: `). Pure.

// Python logging as vLLM formats it: LEVEL MM-DD HH:MM:SS [file.py:line] message
const VLLM_HEAD = /^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+(?:\[[^\]]*\]\s*)?/;
// Rust tracing: ISO time, level, target (module path or span chain) and a colon.
const TRACING_HEAD = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+(?:TRACE|DEBUG|INFO|WARN|ERROR)\s+(?:[\w.:{}=" -]*?[\w}]:\s)?/;
// Python logging's default and a bare level prefix: `INFO:root:message`, `WARNING: message`.
const PLAIN_HEAD = /^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL):(?:[\w.]+:)?\s*/;

export type LogLevel = 'error' | 'warn' | 'info';

export function logLevel(line: string): LogLevel {
  const s = normalizeLine(line);
  if (/^(?:\S+\s+)?(?:ERROR|CRITICAL)\b/.test(s) || /^(?:Traceback|\w+Error:)/.test(s)) return 'error';
  if (/^(?:\S+\s+)?(?:WARNING|WARN)\b/.test(s)) return 'warn';
  return 'info';
}

/** `(EngineCore pid=48211) INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens` -> `GPU KV cache size: 14,816 tokens`. */
export function logMessage(line: string): string {
  let s = normalizeLine(line);
  for (const head of [TRACING_HEAD, VLLM_HEAD, PLAIN_HEAD]) {
    const m = head.exec(s);
    if (m) {
      s = s.slice(m[0].length);
      break;
    }
  }
  return s.replace(/\s+/g, ' ').trim();
}
