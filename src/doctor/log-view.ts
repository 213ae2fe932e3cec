import { basename } from 'node:path';
import type { FileFinding } from '../diagnose/types.js';
import type { Plan } from '../plan/types.js';
import { skip, warn, type CheckResult, type LogSet, type RunView } from './types.js';
import type { NoLogs } from './prepare.js';

// Helpers shared by the log-reading checks (kv.events, kv.allocated, logs.errors). Pure.

export const NO_LOGS = 'no run logs: start one with `dynamo-dev up`, or pass --logs PATH';

/**
 * The result of a log check with no logs to judge. Only logs.errors warns about a run that failed
 * minutes ago (one warning, not three); the others skip with the same words.
 */
export function noLogsResult(n: NoLogs, mayWarn: boolean): CheckResult {
  return n.status === 'warn' && mayWarn ? warn(n.summary, n.fix) : skip(n.summary);
}

/** The skip summary when a log set holds no file to read: "passes" on zero lines would be a guess. */
export function noLogFiles(logs: LogSet): string {
  return logs.source === 'run'
    ? `no log file of ${logs.label} is left to read`
    : `no log files in ${logs.label} (folders are searched for *.log, *.txt, *.jsonl, *.out, *.err and their .gz)`;
}

/** "agg-0 (logs/agg-0.log:12)" for run logs; "worker.log:12" for --logs files. */
export function where(logs: LogSet, file: string, line?: number): string {
  const f = logs.files.find((x) => x.path === file);
  const place = line === undefined ? file : `${file}:${line}`;
  return f?.process ? `${f.process} (${place})` : place;
}

/** The plan the logs belong to: the run's recorded plan for run logs, else the doctor's plan. */
export function planFor(logs: LogSet | null, run: RunView | null, fallback: Plan): Plan {
  return logs?.source === 'run' && run ? run.record.plan : fallback;
}

/** One file's findings (empty when the scan did not record per-file results). */
export function fileFindings(logs: LogSet, file: string): FileFinding[] {
  return logs.scan.byFile?.[file] ?? [];
}

const WORKER_ROLES = new Set(['agg', 'prefill', 'decode']);
const WORKER_NAME = /worker|vllm|agg|prefill|decode|engine/i;
const FRONTEND_NAME = /frontend|router/i;
// Codes only a worker (vLLM engine) logs; a file with one of them is a worker log.
const WORKER_CODES = /^(?:vllm|cuda|nvml|hf|ucx)\./;

/**
 * The worker logs in a log set: by role for run logs; for --logs files (roles unknown) the files
 * that logged a KV size or a worker-only finding, or whose name says worker/agg/prefill/decode.
 */
export function workerFiles(logs: LogSet): { path: string; name: string; role: string | null }[] {
  if (logs.source === 'run') {
    return logs.files.filter((f) => f.role !== null && WORKER_ROLES.has(f.role)).map((f) => ({ path: f.path, name: f.process ?? basename(f.path), role: f.role }));
  }
  return logs.files
    .filter((f) => {
      if (logs.scan.kvTokens[f.path] !== null && logs.scan.kvTokens[f.path] !== undefined) return true;
      const name = basename(f.path);
      if (FRONTEND_NAME.test(name)) return false;
      return WORKER_NAME.test(name) || fileFindings(logs, f.path).some((x) => WORKER_CODES.test(x.code));
    })
    .map((f) => ({ path: f.path, name: f.path, role: null }));
}
