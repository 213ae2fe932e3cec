import type { UpEvent } from '../run/events.js';
import type { ProcessState } from '../run/types.js';
import type { Plan } from '../plan/types.js';

// The live view's model: events folded into rows. Pure, so the ink view and its tests share it.

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
  lastLine: string;
}

export interface UpViewState {
  rows: Row[];
  ready: Extract<UpEvent, { event: 'ready' }> | null;
  exited: Extract<UpEvent, { event: 'exited' }>[];
  failed: Extract<UpEvent, { event: 'failed' }> | null;
  stopped: Extract<UpEvent, { event: 'stopped' }> | null;
  preflight: Extract<UpEvent, { event: 'preflight' }> | null;
}

export function initialState(plan: Plan, now = Date.now()): UpViewState {
  return {
    rows: plan.processes.map((p) => ({
      name: p.name, role: p.role, state: 'waiting', kvTokens: null, fraction: p.gpuMemoryUtilization, pid: null, since: now, doneAt: null, lastLine: '',
    })),
    ready: null, exited: [], failed: null, stopped: null, preflight: null,
  };
}

const patch = (s: UpViewState, name: string, f: (r: Row) => Row): UpViewState => ({
  ...s, rows: s.rows.map((r) => (r.name === name ? f(r) : r)),
});

export function reduce(s: UpViewState, e: UpEvent, now = Date.now()): UpViewState {
  switch (e.event) {
    case 'starting':
      return patch(s, e.process, (r) => ({ ...r, pid: e.pid, since: now, doneAt: null }));
    case 'state':
      return patch(s, e.process, (r) => ({
        ...r, state: e.state, kvTokens: e.kvTokens ?? r.kvTokens, pid: e.pid ?? r.pid,
        doneAt: r.doneAt ?? (e.state === 'ready' || e.state === 'failed' || e.state === 'stopped' || e.state === 'exited' ? now : null),
      }));
    case 'log-ready':
      return patch(s, e.process, (r) => ({ ...r, kvTokens: e.kvTokens }));
    case 'line':
      return e.text.trim() === '' ? s : patch(s, e.process, (r) => ({ ...r, lastLine: e.text }));
    case 'ready':
      return { ...s, ready: e };
    case 'exited':
      return { ...s, exited: [...s.exited, e] };
    case 'failed':
      return { ...s, failed: e };
    case 'stopped':
      return { ...s, stopped: e };
    case 'preflight':
      return { ...s, preflight: e };
    default:
      return s;
  }
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
};

export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}
