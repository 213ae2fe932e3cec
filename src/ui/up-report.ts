import chalk from 'chalk';
import { basename } from 'node:path';
import type { UpEvent } from '../run/events.js';
import type { Diagnosis } from '../run/diagnosis.js';
import { fillFix } from '../diagnose/fill-fix.js';
import type { Plan } from '../plan/types.js';
import { versionSupport } from '../plan/dynamo-releases.js';
import { formatGpuPicture, gpuPicture } from './gpu-bar.js';
import { keepWhole, truncateWords, visibleLength, wholeWords, wrapFix, wrapWords } from './fit.js';
import { logMessage } from './log-message.js';
import { stopAsker } from './up-state.js';
import { formatOutcome } from './doctor-report.js';
import { checkCommand } from './teardown-report.js';
import { endedWords, whenEnded } from '../run/ended.js';

// The words of `up`'s summary and failure report, shared by the plain renderer and the ink view.
// They are printed as plain text (never inside the live view), so the terminal soft-wraps long
// lines and a copied command or path comes out whole. Commands stand alone on their line. The
// actionable part comes last: the screen's bottom is what a person reads first.

type Ev<K extends UpEvent['event']> = Extract<UpEvent, { event: K }>;

export interface TextOptions {
  /** Terminal columns (context lines such as log tails are cut to fit; commands never are). */
  columns?: number;
  /** Block characters and colours for the GPU picture (a terminal), else ASCII. */
  fancy?: boolean;
  /** The run's model: fixes name it instead of the signature table's MODEL placeholder. */
  model?: string;
}

const num = (n: number) => n.toLocaleString('en-US');
const ms = (x: number) => (x < 1000 ? `${Math.round(x)} ms` : `${(x / 1000).toFixed(1)} s`);

/**
 * up's first line: the recipe, its model, and the Dynamo and interpreter that will run it (issue 31:
 * after `setup --release 1.4.2` a user must see at once whether 1.4.2 is the one that runs).
 */
export function formatHeader(recipe: string, model: string, dynamo: { version: string | null; python: string }): string {
  // A release known from source only (plan/dynamo-releases.ts FROM_SOURCE) is said so at once.
  const note = dynamo.version && versionSupport(dynamo.version) === 'from-source' ? ' (from source, not run here)' : '';
  const runs = dynamo.version ? `Dynamo ${dynamo.version}${note} · ${dynamo.python}` : `no Dynamo found in ${dynamo.python}`;
  return `${chalk.bold(`up ${recipe}`)} ${chalk.dim(`· ${model} · ${runs}`)}\n`;
}

/** What will run and where it goes in memory (before start). */
export function formatPlanSummary(plan: Plan, o: TextOptions = {}): string {
  const gpu = plan.engine === 'mocker' ? 'mocker engine, no GPU memory'
    : plan.device === 'cpu' ? `the CPU (vLLM's CPU build${plan.budget.budgetMiB !== null ? `, ~${(plan.budget.budgetMiB / 1024).toFixed(1)} GiB of RAM` : ''})`
    : plan.gpu.totalMiB !== null ? `GPU ${plan.gpu.index}` : `GPU ${plan.gpu.index} (total memory unknown: no nvidia-smi answer)`;
  // Wrapped at words on a terminal: a line the terminal wraps itself throws off the live view's redraw (issue 32: the CPU's line is 82 columns).
  const out = wrapWords(`${plan.processes.length} processes (${plan.processes.map((p) => p.name).join(', ')}) on ${gpu}`, o.columns ?? Infinity, '  ');
  const pic = gpuPicture(plan);
  let text = `${out.join('\n')}\n`;
  if (pic) text += formatGpuPicture(pic, { width: o.columns ?? 80, fancy: Boolean(o.fancy), indent: '  ' });
  return text;
}

/** `run ID  logs in PATH`: on a terminal (`columns`) a path that does not fit goes whole on its own line. */
export function formatRunLine(e: Ev<'run'>, columns = Infinity): string {
  const [first, ...rest] = wrapWords(`run ${e.runId}  logs in ${e.logsDir}`, columns, '  ');
  const head = first.replace(/^(run \S+ {2})(.*)$/, (_, run: string, logs: string) => `${run}${chalk.dim(logs)}`);
  return `${[head, ...rest.map((l) => chalk.dim(l))].join('\n')}\n`;
}

export function formatReady(e: Ev<'ready'>, plan: Plan | null = null, o: TextOptions = {}): string {
  const out: string[] = [];
  out.push(chalk.green.bold(`✓ ready in ${(e.ms / 1000).toFixed(1)} s`) + `  run ${e.runId}`);
  const w = Math.max(...Object.keys(e.logs).map((x) => x.length), 8);
  const pic = plan ? gpuPicture(plan, Object.fromEntries(e.workers.map((x) => [x.name, x.kvTokens]))) : null;
  // The picture names each worker's KV tokens; without one, a line per worker does.
  for (const x of pic ? [] : e.workers) {
    const kvGiB = plan?.device === 'cpu' ? plan.processes.find((p) => p.name === x.name)?.kvCacheGiB : undefined;
    const f = kvGiB !== undefined ? `CPU, ${kvGiB} GiB of RAM for KV` : x.gpuMemoryUtilization !== null ? `gpu ${x.gpuMemoryUtilization}` : 'no gpu';
    out.push(`  ${x.name.padEnd(w)}  ${x.kvTokens !== null ? `KV ${num(x.kvTokens)} tokens` : 'no KV line'}  ${f}`);
  }
  if (pic) out.push(formatGpuPicture(pic, { width: o.columns ?? 80, fancy: Boolean(o.fancy), indent: '  ' }).trimEnd());
  out.push('  logs');
  // A path that does not fit beside its name goes alone on the next line at column 0: the terminal
  // soft-wraps it there (not under the name column) and a line selection copies exactly it.
  const cols = o.columns ?? Infinity;
  const fits = Object.entries(e.logs).every(([, path]) => 4 + w + 2 + visibleLength(path) <= cols);
  for (const [name, path] of Object.entries(e.logs)) out.push(...(fits ? [`    ${name.padEnd(w)}  ${path}`] : [`    ${name}`, path]));
  out.push(`  url    ${e.url}`);
  out.push(`  model  ${e.model}`);
  out.push('  try it:');
  out.push(e.curl);
  out.push(e.detached
    ? `  detached; stop with: dynamo-dev teardown --run ${e.runId}`
    : '  supervising: Ctrl-C stops every process');
  return `${out.join('\n')}\n`;
}

export function formatDiagnosis(d: Diagnosis, indent = '  ', columns = Infinity, at: { model?: string; process?: string | null } = {}): string[] {
  const wrap = (text: string) => wrapWords(`${indent}${text}`, columns, `${indent}  `);
  const room = Number.isFinite(columns) ? columns - indent.length : Infinity;
  return [
    ...wrap(`${chalk.bold('cause:')} ${d.title} [${d.code}]`),
    // The matched line is evidence, not instructions: one line is enough (the log has all of it).
    // A long path at its start (a Python warning's `/opt/venv/.../__init__.py:182:`) would leave no
    // whole word to show: paths shrink to their file name (the log itself is named above).
    `${indent}${wholeWords(`${chalk.dim(`${basename(d.file)}:${d.line}:`)} ${logMessage(d.text).replace(/(^|\s)\/\S*\/(?=[^\s/])/g, '$1…/')}`, room)}`,
    ...wrap(d.explanation),
    ...wrapFix(`${indent}${chalk.bold('fix:')} ${fillFix(d.fix, at)}`, columns, `${indent}  `),
  ];
}

/** The tail of a log: a few lines when a known cause explains the failure, more when none does. */
function tail(lines: string[], known: boolean, o: TextOptions, name: string | null): string[] {
  const n = known ? 4 : 12;
  const t = lines.filter((l) => l.trim() !== '').slice(-n);
  if (t.length === 0) return [];
  const room = Math.max(20, (o.columns ?? 200) - 4);
  return [`  last lines${name ? ` of ${name}` : ''}:`, ...t.map((l) => `  ${chalk.dim('│')} ${truncateWords(l, room)}`)];
}

/** How a process ended, in words. */
export function exitWords(e: Ev<'exited'>): string {
  return e.error ? endedWords(e) : `${endedWords(e)} ${whenEnded(e.afterReady)}`;
}

/** One line at the moment a process dies (the full report waits until everything is stopped). */
export function formatExitNotice(e: Ev<'exited'>, columns = Infinity): string {
  // up --restart: the run goes on, the process is started again (wrapped at words on a terminal).
  if (e.restart) return `${wrapWords(`${chalk.yellow('!')} ${e.process} ${exitWords(e)}; starting it again (--restart ${e.restart})`, columns, '    ').join('\n')}\n`;
  return chalk.red(`✗ ${e.process} ${exitWords(e)}; stopping the others`) + '\n';
}

/**
 * The failure report, printed once everything is stopped: the log's last lines, the cause and its
 * fix, and last the `✗ up failed` line. `exited` is the process's exit report when it had one.
 */
export function formatFailureReport(f: Ev<'failed'>, exited: Ev<'exited'> | null, o: TextOptions = {}): string {
  const diagnosis = f.diagnosis ?? exited?.diagnosis ?? null;
  const lines = f.lastLines.length ? f.lastLines : exited?.lastLines ?? [];
  const log = f.log ?? exited?.log ?? null;
  const out: string[] = [];
  const columns = o.columns ?? Infinity;
  out.push(...tail(lines, diagnosis !== null, o, f.process));
  // The path is copied: on a terminal one that does not fit goes whole on its own line.
  if (log) out.push(...wrapWords(`  log: ${log}`, columns, '    '));
  if (diagnosis) out.push(...formatDiagnosis(diagnosis, '  ', columns, { model: o.model, process: f.process ?? exited?.process }));
  else if (f.process !== null && !exited?.error) {
    out.push(...wrapWords(`  ${chalk.bold('cause:')} no known failure signature in ${f.process}'s log; its last lines are above`, columns, '    '));
  }
  if (f.hint) out.push(...wrapFix(`  ${chalk.bold(diagnosis ? 'also:' : 'fix:')} ${f.hint}`, columns, '    '));
  else if (!diagnosis && f.process !== null && !exited?.error) {
    out.push(...wrapFix(`  ${chalk.bold('fix:')} read the whole log: ${keepWhole(`dynamo-dev logs ${f.process}`)}`, columns, '    '));
  }
  out.push(chalk.red.bold(`✗ up failed: ${f.reason}`));
  return `${out.join('\n')}\n`;
}

export interface StopContext {
  reason: 'user' | 'failure' | 'teardown' | 'detached';
  /** Who asked (teardown from another terminal: its pid). */
  by?: string | null;
  /** Log path by process. */
  logs: Record<string, string>;
}

/**
 * The stop line(s): how many were stopped and how long it took, who ignored SIGTERM (with its log
 * path alone on the next line, to copy), what remains. `rowsShown`: the live view already printed a
 * line per process, so the summary does not list them again.
 */
export function formatStopped(e: Ev<'stopped'>, ctx: StopContext = { reason: e.reason, logs: {} }, o: { columns?: number; rowsShown?: boolean } = {}): string {
  const columns = o.columns ?? Infinity;
  const signalled = e.stopped.filter((s) => s.signal !== null);
  const took = Math.max(0, ...e.stopped.map((s) => s.ms));
  const parts = e.stopped.map((s) => `${s.name} ${s.signal ?? (s.note ?? 'not running')}${s.signal ? ` ${ms(s.ms)}` : ''}`);
  const who = ctx.reason === 'teardown' ? ` by dynamo-dev teardown${ctx.by ? ` (${ctx.by})` : ''} from another terminal` : '';
  const n = signalled.length;
  const head = `stopped ${n} process${n === 1 ? '' : 'es'}${who} in ${ms(took)}${!o.rowsShown && parts.length ? `: ${parts.join(', ')}` : ''}`;
  const out = wrapWords(head, columns, '  ');
  for (const s of e.stopped.filter((x) => x.signal === 'SIGKILL')) {
    const log = ctx.logs[s.name];
    const what = s.forced
      ? s.forcedBy === 'SIGINT' ? `${s.name} was killed by the second Ctrl-C (SIGKILL) after ${ms(s.ms)}` : `${s.name} was killed with SIGKILL after ${ms(s.ms)} at ${stopAsker(s.forcedBy)}`
      : `${s.name} ignored SIGTERM and was killed with SIGKILL after ${ms(s.ms)}`;
    out.push(...wrapWords(chalk.yellow(`! ${what}${log ? '; its log:' : ''}`), columns, '  '));
    if (log) out.push(...wrapWords(`  ${log}`, columns, '  '));
  }
  for (const r of e.remaining) out.push(...wrapWords(`✗ still running: ${r.name} pid ${r.pid}${r.state ? ` (state ${r.state})` : ''} ${r.cmd}`, columns, '  ').map((l) => chalk.red(l)));
  if (e.remaining.length) {
    // SIGKILL could not end them (D state: stuck in the kernel): the run keeps them, status shows
    // them, and teardown of the run tries them again.
    const ps = checkCommand(e.remaining.map((r) => r.pid));
    out.push(...wrapFix(`  SIGKILL could not end ${e.remaining.length === 1 ? 'it' : 'them'} (state D = stuck in the kernel, e.g. a GPU driver call); check: ${keepWhole(ps)}`, columns, '    '));
    out.push(...wrapFix(`  fix: dynamo-dev teardown --run ${e.runId}`, columns, '    '));
  }
  return `${out.join('\n')}\n`;
}

export function formatPreflightFailures(e: Ev<'preflight'>, columns = Infinity): string {
  const out: string[] = [];
  const shown = e.checks.filter((c) => c.status === 'fail' || c.status === 'warn');
  const width = Math.max(0, ...shown.map((c) => c.title.length));
  for (const c of shown) out.push(formatOutcome(c, width, columns).trimEnd());
  const fails = e.checks.filter((c) => c.status === 'fail').length;
  if (e.ok) out.push(`preflight: ${e.checks.length} checks, nothing stops the start`);
  else {
    // Wrapped at words and painted per line: at 80 columns the terminal would cut it mid-word.
    const verdict = e.portsOnly
      ? '✗ a port of the plan is taken: nothing was started (--no-preflight skips doctor\'s checks, never this one)'
      : `✗ preflight failed: ${fails} check(s) would stop the start; nothing was started (skip with --no-preflight)`;
    out.push(...wrapWords(verdict, columns, '  ').map((l) => chalk.red.bold(l)));
  }
  return `${out.join('\n')}\n`;
}


/** What an interrupt before the start cut short: one line (the spinner is gone by then). */
export function formatInterrupted(e: Ev<'interrupted'>, columns = Infinity): string {
  const what = e.pending.length ? `; still checking: ${e.pending.join(', ')}` : '';
  return `${wrapWords(`${chalk.yellow.bold('interrupted')} (${e.signal}) during preflight${what}. Nothing was started.`, columns, '  ').join('\n')}\n`;
}

/**
 * A hint said in full under the ready block on a terminal, wrapped at word boundaries (the live
 * view's row cut it to its room: "Dynamo 1.3.1 does not log…" says nothing).
 */
export function formatHintNote(process: string, text: string, columns = Infinity): string {
  return `${wrapFix(`${chalk.yellow('!')} ${process}: ${logMessage(text)}`, columns, '    ').join('\n')}\n`;
}
