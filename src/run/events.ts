import type { Plan } from '../plan/types.js';
import type { CheckOutcome } from '../doctor/types.js';
import type { ProcessState } from './types.js';
import type { Diagnosis } from './diagnosis.js';
import type { StopResult, StopTargetState, Survivor } from './stop.js';

// The events `up` emits (CLI.md "up --json"): the renderers (ink, plain, NDJSON) all read these.
// `state` and `line` are for the live view only and are not part of the NDJSON stream.

export interface ReadyWorker {
  name: string;
  role: string;
  kvTokens: number | null;
  gpuMemoryUtilization: number | null;
  log: string;
  health: string | null;
}

export type UpEvent =
  | { event: 'plan'; runId: string | null; plan: Plan }
  | { event: 'preflight'; ok: boolean; checks: Pick<CheckOutcome, 'id' | 'title' | 'status' | 'summary' | 'details' | 'fix'>[]; portsOnly?: true }
  | { event: 'starting'; process: string; pid: number | null; log: string; waitedFor: string[] }
  | { event: 'log-ready'; process: string; kvTokens: number; ms: number }
  | {
      event: 'ready';
      runId: string;
      url: string;
      model: string;
      curl: string;
      workers: ReadyWorker[];
      logs: Record<string, string>;
      ms: number;
      detached: boolean;
    }
  | {
      event: 'exited';
      process: string;
      code: number | null;
      signal: string | null;
      /** The process could not be started at all (interpreter not found...). */
      error: string | null;
      /** Root cause from the signature table, null when nothing known matched. */
      diagnosis: Diagnosis | null;
      afterReady: boolean;
      lastLines: string[];
      log: string;
      /** `up --restart`: it is being started again by this policy (`on-failure:1`), not the end of the run. */
      restart?: string;
    }
  | {
      event: 'failed';
      reason: string;
      process: string | null;
      diagnosis: Diagnosis | null;
      /** Extra, specific advice (e.g. which lock to look at). */
      hint: string | null;
      lastLines: string[];
      log: string | null;
    }
  | {
      event: 'stopped'; runId: string; reason: 'user' | 'failure' | 'detached'; stopped: StopResult[]; remaining: Survivor[];
      /** A user stop (Ctrl-C, SIGTERM, SIGHUP) that interrupted the start: `up` exits 130. */
      beforeReady?: boolean;
    }
  | { event: 'state'; process: string; state: ProcessState; kvTokens: number | null; pid: number | null }
  | { event: 'line'; process: string; text: string }
  /** Preflight checks still running (titles), for the view's spinner; view-only. */
  | { event: 'preflight-progress'; pending: string[]; done: number; total: number }
  /** The run's processes are about to start (the run id is now saved); view-only. */
  | { event: 'run'; runId: string; logsDir: string }
  /** Something a person should know about a process while it runs (a known warning in its log). */
  | { event: 'hint'; process: string; code: string; text: string }
  /** Stopping begins: every target gets SIGTERM now and SIGKILL at `killAt` (ms epoch); `by`: who asked (teardown's pid). */
  | { event: 'stopping'; reason: 'user' | 'failure' | 'teardown'; by: string | null; killAt: number; targets: { name: string; pid: number }[] }
  /** The stop's state after the first SIGTERMs and whenever a target changes phase; view-only. */
  | { event: 'stop-progress'; killInMs: number; targets: StopTargetState[] }
  /** Ctrl-C / SIGTERM / SIGHUP before anything started (during preflight): `pending` names the checks cut short; up exits 130; view-only (--json: a `failed` event). */
  | { event: 'interrupted'; stage: 'preflight'; signal: NodeJS.Signals; pending: string[] };

export const NDJSON_EVENTS = new Set(['plan', 'preflight', 'starting', 'log-ready', 'hint', 'ready', 'exited', 'failed', 'stopping', 'stopped']);

/** One NDJSON line with "event" first and "ts"; null for view-only events. Pure. */
export function formatNdjson(e: UpEvent, now: Date = new Date()): string | null {
  if (!NDJSON_EVENTS.has(e.event)) return null;
  const { event, ...rest } = e;
  return `${JSON.stringify({ event, ts: now.toISOString(), ...rest })}\n`;
}

/** A curl line a user can paste to try the endpoint. */
export function curlLine(url: string, model: string): string {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 32 });
  return `curl -s ${url}/v1/chat/completions -H 'Content-Type: application/json' -d '${body.replace(/'/g, `'\\''`)}'`;
}
