import type { UpEvent } from '../run/events.js';
import type { ProcessState } from '../run/types.js';
import type { Plan } from '../plan/types.js';
import type { StopTargetState } from '../run/stop.js';
import { logMessage } from './log-message.js';

// The live view's model: events folded into rows. Pure, so the ink view and its tests share it.

/** No log output for this long while a process is still coming up: the row says so. */
export const STALL_MS = 60_000;

export interface Row {
  name: string;
  role: string;
  state: ProcessState;
  kvTokens: number | null;
  fraction: number | null;
  pid: number | null;
  /** When the current phase started (ms epoch): spawned, or the wait began. */
  since: number;
  /** When it became ready or ended: the elapsed time stops there. */
  doneAt: number | null;
  /** The last log message, without timestamp, level and process prefix. */
  lastLine: string;
  /** When the log last said something (ms epoch; null: nothing yet). */
  lastLineAt: number | null;
  /** A known warning seen in its log (yellow row, one-line reason). */
  hint: { code: string; text: string } | null;
  /** While stopping: what was sent and how far it got. */
  stop: StopTargetState | null;
}

export interface UpViewState {
  rows: Row[];
  preflight: Extract<UpEvent, { event: 'preflight' }> | null;
  preflightProgress: Extract<UpEvent, { event: 'preflight-progress' }> | null;
  preflightSince: number;
  started: boolean;
  stopping: Extract<UpEvent, { event: 'stopping' }> | null;
  /** When SIGKILL is due (ms epoch), from the latest stop snapshot. */
  killAt: number | null;
  /**
   * While stopping: the rows that are finished, in the order they finished (those with nothing to
   * stop first). The view prints them once each, by index, so this order must only ever grow.
   */
  finished: string[];
}

export function initialState(plan: Plan, now = Date.now()): UpViewState {
  return {
    rows: plan.processes.map((p) => ({
      name: p.name, role: p.role, state: 'waiting', kvTokens: null, fraction: p.gpuMemoryUtilization, pid: null, since: now, doneAt: null,
      lastLine: '', lastLineAt: null, hint: null, stop: null,
    })),
    preflight: null, preflightProgress: null, preflightSince: now, started: false, stopping: null, killAt: null, finished: [],
  };
}

const patch = (s: UpViewState, name: string, f: (r: Row) => Row): UpViewState => ({
  ...s, rows: s.rows.map((r) => (r.name === name ? f(r) : r)),
});

const ENDED: ProcessState[] = ['ready', 'failed', 'stopped', 'exited'];

/** A warning the row can show from one log line alone (the frontend's own diagnostic codes). */
export function lineHint(text: string): { code: string; text: string } | null {
  if (/kv_event_publisher_disabled|KV-event publishing is disabled/.test(text)) {
    return { code: 'kv_event_publisher_disabled', text: 'a worker publishes no KV events: the KV router ignores the cache (see `dynamo-dev doctor --only kv.events`)' };
  }
  return null;
}

export function reduce(s: UpViewState, e: UpEvent, now = Date.now()): UpViewState {
  switch (e.event) {
    case 'run':
      return { ...s, started: true };
    case 'starting':
      return patch({ ...s, started: true }, e.process, (r) => ({ ...r, pid: e.pid, since: now, doneAt: null, lastLineAt: now }));
    case 'state':
      return patch(s, e.process, (r) => ({
        ...r, state: e.state, kvTokens: e.kvTokens ?? r.kvTokens, pid: e.pid ?? r.pid,
        // Past the lock: the wait is over once the worker allocated its KV cache or is ready.
        hint: r.hint?.code === 'hf.lock-wait' && (e.state === 'kv-allocated' || e.state === 'ready') ? null : r.hint,
        doneAt: r.doneAt ?? (ENDED.includes(e.state) ? now : null),
      }));
    case 'log-ready':
      return patch(s, e.process, (r) => ({ ...r, kvTokens: e.kvTokens }));
    case 'line': {
      const msg = logMessage(e.text);
      if (msg === '') return s;
      const hint = lineHint(msg);
      return patch(s, e.process, (r) => ({ ...r, lastLine: msg, lastLineAt: now, hint: hint ?? r.hint }));
    }
    case 'hint':
      return patch(s, e.process, (r) => ({ ...r, hint: { code: e.code, text: e.text } }));
    case 'preflight':
      return { ...s, preflight: e };
    case 'preflight-progress':
      return { ...s, preflightProgress: e };
    case 'stopping': {
      const targets = new Set(e.targets.map((t) => t.name));
      const idle = s.rows.filter((r) => !targets.has(r.name) || r.stop?.phase === 'done').map((r) => r.name);
      return { ...s, stopping: e, killAt: e.killAt, finished: addNew(s.finished, idle) };
    }
    case 'stop-progress': {
      const by = new Map(e.targets.map((t) => [t.name, t]));
      const done = e.targets.filter((t) => t.phase === 'done').map((t) => t.name);
      return {
        ...s, killAt: now + e.killInMs, finished: addNew(s.finished, done),
        rows: s.rows.map((r) => (by.has(r.name) ? { ...r, stop: by.get(r.name)! } : r)),
      };
    }
    default:
      return s;
  }
}

const addNew = (list: string[], names: string[]): string[] => {
  const fresh = names.filter((n) => !list.includes(n));
  return fresh.length ? [...list, ...fresh] : list;
};

/** The hint a row shows now: a known warning, else a stall after STALL_MS without output. */
export function rowHint(r: Row, now: number): string | null {
  if (r.hint) return r.hint.text;
  const coming = r.state === 'starting' || r.state === 'loading' || r.state === 'kv-allocated';
  if (coming && r.lastLineAt !== null && now - r.lastLineAt >= STALL_MS) {
    return `no log output for ${formatElapsed(now - r.lastLineAt)}: stuck? see \`dynamo-dev logs ${r.name}\``;
  }
  return null;
}

export const STATE_LABEL: Record<ProcessState, string> = {
  waiting: 'waiting',
  starting: 'starting',
  loading: 'loading',
  'kv-allocated': 'KV allocated',
  ready: 'ready',
  exited: 'exited',
  failed: 'failed',
  stopped: 'stopped',
  gone: 'gone',
};

export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/**
 * Who asked for an early SIGKILL while a run was stopping, from the signal up received: a second
 * Ctrl-C is SIGINT; `dynamo-dev teardown` from another terminal (or a kill) sends SIGTERM; a closed
 * terminal SIGHUP. Unknown: said as a request, never as a Ctrl-C nobody pressed.
 */
export function stopAsker(by: NodeJS.Signals | undefined): string {
  if (by === 'SIGINT') return 'the second Ctrl-C';
  if (by === 'SIGTERM') return 'a second stop request, a SIGTERM from dynamo-dev teardown or a kill';
  if (by === 'SIGHUP') return 'the terminal closing, SIGHUP';
  return 'a second stop request';
}
