import { stripAnsi, stripPrefixes } from './line.js';

// When a log line says it was written (pure), for `logs` to interleave several processes' logs by
// time. We add no timestamps of our own (DESIGN.md: a line is never changed), so the only times are
// those the writers print:
// - Dynamo (Rust tracing, and its Python components through the same formatter):
//   `2026-10-07T05:12:01.104233Z  INFO main.init: ...`, UTC, microseconds; with
//   DYN_LOGGING_JSONL=1 `{"time":"2026-10-07T05:12:20.704420Z",...}`.
// - vLLM (vllm/logger.py: _FORMAT "%(levelname)s %(asctime)s [...]", _DATE_FORMAT
//   "%m-%d %H:%M:%S"): `INFO 10-07 05:12:04 [...]`, often behind `(EngineCore pid=N) `. Python's
//   logging formats asctime in the process's local time, with no year and whole seconds.
// - UCX (ucs/debug/log.c): `[1759819212.418274] [host:pid:0] ...`, seconds since the epoch.
// - Our restart marker: `--- dynamo-dev restart 2026-12-05T13:59:25.123Z: ...`.
// Any other line (a traceback, a warning from a library) has no time: the caller keeps it after
// the line before it in its file.

const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s/;
const JSON_TIME = /^\{"time":"(\d{4}-\d{2}-\d{2}T[^"]+)"/;
const VLLM = /^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) /;
const UCX = /^\[(\d{9,11}\.\d{1,9})\] \[/;
const RESTART_MARKER = /^--- dynamo-dev restart (\S+?): /;

const HALF_YEAR_MS = 183 * 24 * 3600 * 1000;

/** An ISO 8601 time in ms, or null; a time without zone is local, as Date.parse reads it. */
function isoMs(text: string): number | null {
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The time (ms since the epoch) a log line says it was written, or null when it says none.
 * `nearMs` places the year of vLLM's `MM-DD hh:mm:ss` (local time): the year that puts the line
 * within half a year of it (the run's start), so a run over New Year's Eve reads right.
 */
export function lineTime(line: string, nearMs: number): number | null {
  const s = stripAnsi(line);
  const first = s.charCodeAt(0);
  // Fast paths by the first character: most lines of a big log are one of these.
  if (first >= 48 && first <= 57) {
    const m = ISO.exec(s);
    return m ? isoMs(m[1]) : null;
  }
  if (s.startsWith('{')) {
    const m = JSON_TIME.exec(s);
    return m ? isoMs(m[1]) : null;
  }
  if (s.startsWith('[')) {
    const m = UCX.exec(s);
    return m ? Math.round(Number(m[1]) * 1000) : null;
  }
  if (s.startsWith('-')) {
    const m = RESTART_MARKER.exec(s);
    return m ? isoMs(m[1]) : null;
  }
  const bare = s.startsWith('(') ? stripPrefixes(s) : s;
  const v = VLLM.exec(bare);
  if (!v) {
    const iso = bare !== s ? ISO.exec(bare) : null;
    return iso ? isoMs(iso[1]) : null;
  }
  const [mo, d, h, mi, se] = v.slice(1).map(Number);
  const year = new Date(nearMs).getFullYear();
  for (const y of [year, year - 1, year + 1]) {
    const ms = new Date(y, mo - 1, d, h, mi, se).getTime();
    if (Math.abs(ms - nearMs) <= HALF_YEAR_MS) return ms;
  }
  return new Date(year, mo - 1, d, h, mi, se).getTime();
}
