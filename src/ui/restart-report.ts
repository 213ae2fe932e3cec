import chalk from 'chalk';
import type { RestartEvent } from '../run/restart-request.js';
import { formatDiagnosis } from './up-report.js';
import { keepWhole, truncateWords, wrapFix, wrapWords } from './fit.js';

// The words of `dynamo-dev restart`: one line per step as the supervisor reports it, then the
// verdict last (the bottom of the screen is read first), with the cause as up's failure report has it.

const num = (n: number) => n.toLocaleString('en-US');
const secs = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

export function formatRestartHeader(process: string, runId: string, runName: string | undefined, columns = Infinity): string {
  return `${wrapWords(`${chalk.bold(`restart ${process}`)} ${chalk.dim(`· run ${runId}${runName ? ` (${runName})` : ''}`)}`, columns, '  ').join('\n')}\n`;
}

/** A notice before the steps (a request left by a command that ended), wrapped at words. */
export function formatRestartNotice(text: string, columns = Infinity): string {
  return `${wrapWords(`  ${text}`, columns, '    ').join('\n')}\n`;
}

/** One progress event in words; null for what needs no line. */
export function formatRestartStep(e: RestartEvent, columns = Infinity): string | null {
  const line = (text: string) => `${wrapWords(`  ${text}`, columns, '    ').join('\n')}\n`;
  switch (e.event) {
    case 'taken':
      if (e.joined) return line(`${e.process} is already being restarted by another restart; following it`);
      return e.pid === null ? line(`${e.process} is not running; starting it again`) : null;
    case 'stopped':
      return line(e.signal ? `stopped ${e.process} (pid ${e.pid}) with ${e.signal} in ${secs(e.ms)}${e.note ? ` (${e.note})` : ''}` : `${e.process} (pid ${e.pid}): ${e.note ?? 'already gone'}`);
    case 'starting':
      // No pid: the spawn itself failed (a log that is no file, a program gone); the verdict says why.
      return e.pid === null ? null : line(`started ${e.process} (pid ${e.pid}); its log continues after the line "${e.marker}"`);
    case 'log-ready':
      return line(`${e.process} logged its KV cache: ${num(e.kvTokens)} tokens (${secs(e.ms)})`);
    case 'counted':
      return line(`the frontend counts every worker again`);
    case 'done':
      return null;
  }
}

/** The verdict: ready again with the run's status, or why not with the cause and the log's last lines. */
export function formatRestartVerdict(d: Extract<RestartEvent, { event: 'done' }>, run: { id: string; status: string; why: string | null }, o: { columns?: number; model?: string } = {}): string {
  const columns = o.columns ?? Infinity;
  const out: string[] = [];
  const runWords = `run ${run.id} is ${run.status}${run.why ? ` (${run.why})` : ''}`;
  if (d.ok) {
    const line = `✓ ${d.process} is ready again in ${secs(d.ms)}; ${runWords}`;
    out.push(...wrapWords(run.status === 'ready' ? chalk.green.bold(line) : chalk.yellow.bold(line), columns, '  '));
    return `${out.join('\n')}\n`;
  }
  const tail = d.lastLines.filter((l) => l.trim() !== '').slice(d.diagnosis ? -4 : -12);
  if (tail.length > 0) {
    const room = Math.max(20, (Number.isFinite(columns) ? columns : 200) - 4);
    out.push(`  last lines of ${d.process}:`, ...tail.map((l) => `  ${chalk.dim('│')} ${truncateWords(l, room)}`));
  }
  if (d.log) out.push(...wrapWords(`  log: ${d.log}`, columns, '    '));
  if (d.diagnosis) out.push(...formatDiagnosis(d.diagnosis, '  ', columns, { model: o.model, process: d.process }));
  else if (d.log) {
    out.push(...wrapWords(`  ${chalk.bold('cause:')} no known failure signature in ${d.process}'s log; its last lines are above`, columns, '    '));
    out.push(...wrapFix(`  ${chalk.bold('fix:')} read the whole log: ${keepWhole(`dynamo-dev logs ${d.process} --run ${run.id}`)}`, columns, '    '));
  }
  out.push(...wrapWords(chalk.red.bold(`✗ ${d.process} did not come back: ${d.reason}; ${runWords}`), columns, '  '));
  return `${out.join('\n')}\n`;
}
