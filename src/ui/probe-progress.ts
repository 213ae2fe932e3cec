import type { Writable } from 'node:stream';
import type { ProbeProgress } from '../probe/run.js';

// Probe progress on stderr (stdout stays for the result): on a TTY one bar rewritten in place
// with \r; otherwise one plain line per finished round, so a log or CI shows it is moving.

export interface ProgressSink {
  update(p: ProbeProgress): void;
  /** Clears the bar (TTY) before the result is printed. */
  finish(): void;
}

export function progressBar(done: number, total: number, width = 24): string {
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** The line a TTY shows; pure, for tests. */
export function progressLine(p: ProbeProgress, failed: number): string {
  const last = p.last.ok
    ? `prefix ${p.last.prefix + 1} send ${p.last.repeat + 1}: ${p.last.ttftMs?.toFixed(1)} ms` +
      (p.last.cachedTokens !== null ? `, ${p.last.cachedTokens} cached` : '')
    : `prefix ${p.last.prefix + 1} send ${p.last.repeat + 1}: failed`;
  return `${progressBar(p.done, p.total)} ${p.done}/${p.total}  ${last}${failed ? `  (${failed} failed)` : ''}`;
}

export function createProgress(stream: Writable & { isTTY?: boolean }, mode: 'tty' | 'lines' | 'off'): ProgressSink {
  let failed = 0;
  let shown = false;
  return {
    update(p) {
      if (!p.last.ok) failed++;
      if (mode === 'tty') {
        stream.write(`\r\x1b[2K${progressLine(p, failed)}`);
        shown = true;
      } else if (mode === 'lines' && (p.done % Math.max(1, p.total / p.rounds) === 0 || p.done === p.total)) {
        stream.write(`round ${p.round}/${p.rounds}: ${p.done}/${p.total} requests${failed ? `, ${failed} failed` : ''}\n`);
      }
    },
    finish() {
      if (shown) stream.write('\r\x1b[2K');
    },
  };
}
