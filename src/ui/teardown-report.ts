import chalk from 'chalk';
import type { RunView } from '../doctor/types.js';
import type { TeardownOutcome, TeardownResult } from '../run/teardown.js';
import { keepWhole, wrapFix, wrapWords } from './fit.js';

// Plain-text `teardown`: one line per process as it is done (pid, signal, time), then a verdict.
// On a terminal (`columns` finite) each line wraps to its width with a hanging indent, a command
// to copy kept whole; piped (`columns` Infinity) every line is one line, byte for byte as before.

/** Continuation lines of a process's row and of its sub-line hang under the process name. */
const ROW_INDENT = '      ';

/** Each line wrapped to `columns` with continuations under `indent`; unchanged when not on a terminal. */
export function fitLines(text: string, columns: number, indent: string): string {
  return Number.isFinite(columns) ? wrapWords(text, columns, indent).join('\n') : text;
}

/** `before` + a command to paste + `after`: wrapped on a terminal, the command never broken; piped, one line. */
export function fitCommand(before: string, command: string, after: string, columns: number, indent: string): string {
  return Number.isFinite(columns) ? wrapFix(`${before}${keepWhole(command)}${after}`, columns, indent).join('\n') : `${before}${command}${after}`;
}

/**
 * What teardown is about to do to one live run. "Its supervisor is already stopping it" only
 * while that supervisor lives (`stopping`); one that died mid-stop left the record saying
 * `stopping` with nothing stopping the run: teardown says so and that it stops the run itself.
 */
export function formatRunPlan(v: RunView, grace: number, columns = Infinity): string {
  const n = v.record.processes.filter((p) => p.pid !== null).length;
  const sup = v.record.supervisor;
  // What an earlier stop could not end (it outlived SIGKILL) and still lives: tried again now.
  const left = (v.record.survivors ?? []).filter((x) => v.survivors?.includes(x.pid));
  const now = v.stopping
    ? 'its supervisor is already stopping it'
    : left.length > 0
      ? `${v.status}: its last stop could not end ${left.map((x) => `pid ${x.pid} (${x.name})`).join(', ')} with SIGKILL; trying again`
    : v.record.state === 'stopping' && v.stopping === false
      ? `${v.status}: its supervisor (pid ${sup.pid}) died while stopping it; teardown stops what is left`
      : v.status;
  return fitLines(`stopping run ${v.record.id} (${n} process${n === 1 ? '' : 'es'}, ${now}; SIGKILL after ${grace} s)`, columns, '  ');
}

/** The command that shows the state of processes a stop could not end (`stat` D: stuck in the kernel). */
export function checkCommand(pids: readonly number[]): string {
  return `ps -o pid,stat,args -p ${pids.join(',')}`;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** One stopped process; one that ignored SIGTERM says so and where its log is. */
export function formatStopLine(r: TeardownResult, nameWidth: number, log?: string, columns = Infinity): string {
  const survived = r.note?.includes('survived') ?? false;
  const mark = survived ? chalk.red('✗') : r.signal === null ? chalk.dim('-') : chalk.green('✓');
  const sig = r.signal === null ? chalk.dim('no signal') : r.signal === 'SIGKILL' ? chalk.yellow('SIGKILL') : 'SIGTERM';
  const who = r.run === null ? chalk.dim(' (orphan)') : '';
  const note = r.note ? `  ${chalk.dim(r.note)}` : '';
  const row = `  ${mark} ${r.name.padEnd(nameWidth)}  pid ${String(r.pid).padEnd(7)} ${sig.padEnd(9)} ${formatMs(r.ms).padStart(8)}${who}${note}`;
  const ignored = r.signal === 'SIGKILL' && !survived ? `    ${chalk.yellow(`${r.name} ignored SIGTERM${log ? `; its log: ${log}` : ''}`)}` : null;
  return [row, ...(ignored === null ? [] : [ignored])].map((l) => `${fitLines(l, columns, ROW_INDENT)}\n`).join('');
}

export function formatVerdict(o: TeardownOutcome, ms: number, logsDirs: string[], columns = Infinity): string {
  const lines: string[] = [];
  const signalled = o.stopped.filter((r) => r.signal !== null).length;
  if (o.remaining.length > 0) {
    lines.push(chalk.red.bold(`${o.remaining.length} process(es) remain:`));
    for (const s of o.remaining) {
      const state = s.state ? `, state ${s.state}` : '';
      lines.push(fitLines(`  ${chalk.red('✗')} pid ${s.pid} (${s.name}${state}) ${chalk.dim(s.cmd)}`, columns, ROW_INDENT));
    }
    lines.push(fitCommand(`${chalk.red('fix:')} check them with: `, checkCommand(o.remaining.map((s) => s.pid)), '  (state D = stuck in the kernel, e.g. a GPU driver call)', columns, '     '));
    // What survived SIGKILL stays its run's (run.json, by pid and start ticks): status shows it, teardown tries it again.
    const kept = o.remaining.filter((s) => s.run !== null && typeof s.startTicks === 'number');
    for (const run of new Set(kept.map((s) => s.run!))) {
      const n = kept.filter((s) => s.run === run).length;
      lines.push(fitCommand(`     run ${run} keeps ${n === 1 ? 'it' : 'them'} as its own (\`dynamo-dev status\` shows ${n === 1 ? 'it' : 'them'}); try again with: `, `dynamo-dev teardown --run ${run}`, '', columns, '     '));
    }
  } else if (signalled > 0) {
    lines.push(fitLines(`${chalk.green.bold('nothing remains')}: stopped ${signalled} process${signalled === 1 ? '' : 'es'} in ${formatMs(ms)}`, columns, '  '));
  }
  if (logsDirs.length > 0) lines.push(fitLines(chalk.dim(`logs kept: ${logsDirs.join(' ')}`), columns, '  '));
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
