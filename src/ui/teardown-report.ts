import chalk from 'chalk';
import type { TeardownOutcome, TeardownResult } from '../run/teardown.js';

// Plain-text `teardown`: one line per process as it is done (pid, signal, time), then a verdict.

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** One stopped process; one that ignored SIGTERM says so and where its log is. */
export function formatStopLine(r: TeardownResult, nameWidth: number, log?: string): string {
  const survived = r.note?.includes('survived') ?? false;
  const mark = survived ? chalk.red('✗') : r.signal === null ? chalk.dim('-') : chalk.green('✓');
  const sig = r.signal === null ? chalk.dim('no signal') : r.signal === 'SIGKILL' ? chalk.yellow('SIGKILL') : 'SIGTERM';
  const who = r.run === null ? chalk.dim(' (orphan)') : '';
  const note = r.note ? `  ${chalk.dim(r.note)}` : '';
  const ignored = r.signal === 'SIGKILL' && !survived ? `\n    ${chalk.yellow(`${r.name} ignored SIGTERM${log ? `; its log: ${log}` : ''}`)}` : '';
  return `  ${mark} ${r.name.padEnd(nameWidth)}  pid ${String(r.pid).padEnd(7)} ${sig.padEnd(9)} ${formatMs(r.ms).padStart(8)}${who}${note}${ignored}\n`;
}

export function formatVerdict(o: TeardownOutcome, ms: number, logsDirs: string[]): string {
  const lines: string[] = [];
  const signalled = o.stopped.filter((r) => r.signal !== null).length;
  if (o.remaining.length > 0) {
    lines.push(chalk.red.bold(`${o.remaining.length} process(es) remain:`));
    for (const s of o.remaining) lines.push(`  ${chalk.red('✗')} pid ${s.pid} (${s.name}) ${chalk.dim(s.cmd)}`);
    lines.push(`${chalk.red('fix:')} check them with: ps -o pid,stat,args -p ${o.remaining.map((s) => s.pid).join(',')}  (state D = stuck in the kernel, e.g. a GPU driver call)`);
  } else if (signalled > 0) {
    lines.push(`${chalk.green.bold('nothing remains')}: stopped ${signalled} process${signalled === 1 ? '' : 'es'} in ${formatMs(ms)}`);
  }
  if (logsDirs.length > 0) lines.push(chalk.dim(`logs kept: ${logsDirs.join(' ')}`));
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
