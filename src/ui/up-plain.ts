import type { Writable } from 'node:stream';
import type { UpEvent } from '../run/events.js';
import { formatExited, formatFailed, formatPreflightFailures, formatReady, formatStopped } from './up-report.js';

// `up` without a TTY: one plain line per step, the summary and failure blocks as in the ink view.

export interface UpRenderer {
  onEvent(e: UpEvent): void;
  close(): Promise<void>;
}

/** Pure: the text one event adds to stdout (out) or stderr (err); `seenExit` tracks reported exits. */
export function plainText(e: UpEvent, seenExit: Set<string>): { out?: string; err?: string } {
  switch (e.event) {
    case 'plan': {
      const p = e.plan;
      const gpu = p.gpu.totalMiB !== null ? `GPU ${p.gpu.index} ${p.gpu.totalMiB} MiB` : `GPU ${p.gpu.index}`;
      return { out: `up ${p.recipe}: ${p.model}, ${p.processes.length} processes, ${gpu}${e.runId ? `, run ${e.runId}` : ''}\n` };
    }
    case 'preflight':
      return e.ok ? { out: formatPreflightFailures(e) } : { err: formatPreflightFailures(e) };
    case 'starting':
      return { out: `starting ${e.process}${e.pid !== null ? ` (pid ${e.pid})` : ''}${e.waitedFor.length ? ` after ${e.waitedFor.join(', ')} logged its KV cache size` : ''}\n` };
    case 'log-ready':
      return { out: `${e.process}: KV cache ${e.kvTokens.toLocaleString('en-US')} tokens (${(e.ms / 1000).toFixed(1)} s)\n` };
    case 'state':
      return e.state === 'ready' ? { out: `${e.process} ready\n` } : {};
    case 'ready':
      return { out: formatReady(e) };
    case 'exited':
      seenExit.add(e.process);
      return { err: formatExited(e) };
    case 'failed':
      return { err: formatFailed(e, e.process !== null && seenExit.has(e.process)) };
    case 'stopped':
      return { out: formatStopped(e) };
    default:
      return {};
  }
}

export function plainRenderer(stdout: Writable, stderr: Writable): UpRenderer {
  const seen = new Set<string>();
  return {
    onEvent(e) {
      const t = plainText(e, seen);
      if (t.out) stdout.write(t.out);
      if (t.err) stderr.write(t.err);
    },
    async close() {},
  };
}
