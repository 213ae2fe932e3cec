import type { Writable } from 'node:stream';
import type { UpEvent } from '../run/events.js';
import type { Plan } from '../plan/types.js';
import {
  formatExitNotice, formatFailureReport, formatInterrupted, formatPlanSummary, formatPreflightFailures, formatReady, formatRunLine, formatStopped,
  type StopContext,
} from './up-report.js';
import { logMessage } from './log-message.js';

// `up` without a TTY: one plain line per step, the summary and the failure report as in the live
// view (the failure report after the stop line, so its fix is the last thing printed).

export interface UpRenderer {
  onEvent(e: UpEvent): void;
  close(): Promise<void>;
}

type Ev<K extends UpEvent['event']> = Extract<UpEvent, { event: K }>;

/** What a renderer remembers between events to say things once and in the right order. */
export interface ReportMemory {
  plan: Plan | null;
  exited: Map<string, Ev<'exited'>>;
  failed: Ev<'failed'> | null;
  stopping: Ev<'stopping'> | null;
  logs: Record<string, string>;
  killed: Set<string>;
}

export const newMemory = (plan: Plan | null = null): ReportMemory => ({ plan, exited: new Map(), failed: null, stopping: null, logs: {}, killed: new Set() });

export function stopContext(m: ReportMemory, e: Ev<'stopped'>): StopContext {
  return { reason: m.stopping?.reason ?? e.reason, by: m.stopping?.by ?? null, logs: m.logs };
}

/** The stop line, then the failure report held back until now. */
export function finalText(m: ReportMemory, e: Ev<'stopped'>, columns?: number, rowsShown = false): string {
  let text = formatStopped(e, stopContext(m, e), { columns, rowsShown });
  if (m.failed) text += formatFailureReport(m.failed, m.failed.process ? m.exited.get(m.failed.process) ?? null : null, { columns, model: m.plan?.model });
  return text;
}

/** Pure: the text one event adds to stdout (out) or stderr (err). */
export function plainText(e: UpEvent, m: ReportMemory): { out?: string; err?: string } {
  switch (e.event) {
    case 'plan':
      m.plan = e.plan;
      return { out: formatPlanSummary(e.plan) };
    case 'preflight':
      return e.ok ? { out: formatPreflightFailures(e) } : { err: formatPreflightFailures(e) };
    case 'run':
      return { out: formatRunLine(e) };
    case 'starting':
      m.logs[e.process] = e.log;
      return { out: `starting ${e.process}${e.pid !== null ? ` (pid ${e.pid})` : ''}${e.waitedFor.length ? ` after ${e.waitedFor.join(', ')} logged its KV cache size` : ''}\n` };
    case 'log-ready':
      return { out: `${e.process}: KV cache ${e.kvTokens.toLocaleString('en-US')} tokens (${(e.ms / 1000).toFixed(1)} s)\n` };
    case 'state':
      return e.state === 'ready' ? { out: `${e.process} ready\n` } : {};
    case 'hint':
      return { err: `! ${e.process}: ${logMessage(e.text)}\n` };
    case 'ready':
      return { out: formatReady(e, m.plan) };
    case 'exited':
      m.exited.set(e.process, e);
      return { err: formatExitNotice(e) };
    case 'interrupted':
      return { err: formatInterrupted(e) };
    case 'failed':
      m.failed = e;
      // Nothing will be stopped (preflight): the report is due now.
      return e.process === null && !m.stopping && Object.keys(m.logs).length === 0 ? { err: formatFailureReport(e, null) } : {};
    case 'stopping':
      m.stopping = e;
      return { out: `stopping ${e.targets.map((t) => t.name).join(', ')}${e.by ? ` (asked by ${e.by})` : ''}: SIGTERM now, SIGKILL in ${Math.max(0, Math.round((e.killAt - Date.now()) / 1000))} s\n` };
    case 'stop-progress': {
      // One line per target that had to be killed, once.
      const killing = e.targets.filter((t) => t.phase === 'killing' && !m.killed.has(t.name));
      for (const t of killing) m.killed.add(t.name);
      return killing.length ? { out: killing.map((t) => `${t.name} (pid ${t.pid}) did not stop on SIGTERM: SIGKILL\n`).join('') } : {};
    }
    case 'stopped': {
      if (m.failed && m.failed.process === null && Object.keys(m.logs).length === 0 && e.stopped.length === 0) return {};
      const t = finalText(m, e);
      return m.failed ? { err: t } : { out: t };
    }
    default:
      return {};
  }
}

export function plainRenderer(stdout: Writable, stderr: Writable): UpRenderer {
  const m = newMemory();
  return {
    onEvent(e) {
      const t = plainText(e, m);
      if (t.out) stdout.write(t.out);
      if (t.err) stderr.write(t.err);
    },
    async close() {},
  };
}
