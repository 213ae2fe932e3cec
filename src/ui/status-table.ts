import chalk from 'chalk';
import { backoffWords } from '../run/policy/restart-policy.js';
import type { RunStatusDoc } from '../run/status-doc.js';
import type { RunStatus } from '../run/types.js';
import { formatClock, formatDuration as compactDuration } from '../format-duration.js';
import { describeEnd } from '../run/losses.js';
import { survivorStateText } from '../run/survivors.js';
import { checkCommand, fitCommand } from './teardown-report.js';
import { keepWhole, truncateWords, visibleLength, wrapFix, wrapWords } from './fit.js';

// Plain-text `status`: a table per live run (or the one asked for), one line per other recent run.

export function paintRunState(s: RunStatus, text: string = s): string {
  switch (s) {
    case 'ready': return chalk.green(text);
    case 'starting': return chalk.yellow(text);
    case 'orphaned':
    case 'degraded':
    case 'failed': return chalk.red(text);
    default: return chalk.dim(text);
  }
}

/** 3s, 5m02s, 2h05m, 3d04h: padded so the uptime column lines up. */
export function formatDuration(ms: number | null): string {
  return ms === null ? '-' : compactDuration(ms, true);
}

const yesNo = (b: boolean) => (b ? chalk.green('yes') : chalk.dim('no'));
const fmtPorts = (p: Record<string, number>) => Object.entries(p).map(([k, v]) => `${k}:${v}`).join(' ') || '-';

/** Pads by visible width (chalk codes do not count). */
function pad(text: string, width: number): string {
  // eslint-disable-next-line no-control-regex
  const visible = text.replace(/\u001b\[[0-9;]*m/g, '').length;
  return text + ' '.repeat(Math.max(0, width - visible));
}

function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].replace(/\u001b\[[0-9;]*m/g, '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : pad(cell, widths[c]))).join('  ').trimEnd());
}

/**
 * A table that fits `columns`: whole columns are dropped (least useful first, by header) before
 * anything would wrap; what remains is never cut.
 */
export function fitTable(rows: string[][], columns: number, dropOrder: string[], indent = 2): string[] {
  let keep = rows[0].map((_, i) => i);
  const header = rows[0].map((h) => h.replace(/\u001b\[[0-9;]*m/g, ''));
  const render = () => table(rows.map((r) => keep.map((i) => r[i])));
  let out = render();
  for (const name of dropOrder) {
    if (Math.max(...out.map(visibleLength)) + indent <= columns) break;
    const i = header.indexOf(name);
    if (i < 0 || !keep.includes(i)) continue;
    keep = keep.filter((k) => k !== i);
    out = render();
  }
  return out;
}

/** Columns go in this order when the terminal is narrow (ports and pids are in `status --json`). */
const DROP = ['PORTS', 'ALIVE', 'PID', 'UPTIME', 'READY'];

/** The STATE cell: how a process that ended says where to look (exit 1: its log; SIGKILL: OOM or us). */
function stateCell(p: RunStatusDoc['processes'][number]): string {
  if (!p.alive && (p.state === 'failed' || p.state === 'exited') && (p.exitCode !== null || p.signal !== null)) {
    if (p.state === 'exited' && p.exitCode === 0 && p.signal === null) return chalk.red('exited (exit 0)');
    return chalk.red(`${p.state} (${p.signal ?? `exit ${p.exitCode}`})`);
  }
  if (p.state === 'gone') return chalk.red('gone (exit unknown)');
  if (p.pid === null && (p.state === 'stopped' || p.state === 'waiting')) return chalk.dim('not started');
  return p.alive || ['exited', 'failed', 'stopped'].includes(p.state) ? p.state : chalk.red(`${p.state} (gone)`);
}

type Lost = RunStatusDoc['lost'][number];

const ago = (at: string | null, now: number): string => {
  const t = at ? Date.parse(at) : NaN;
  return Number.isFinite(t) ? ` ${compactDuration(Math.max(0, now - t))} ago` : '';
};

/** "agg-1 killed by SIGKILL 12s ago", "agg-1 exited 1 3m ago", "agg-1 gone (noticed 5s ago)": for the first line. */
function lossBrief(x: Lost, now: number, d?: RunStatusDoc): string {
  const how = x.how === 'killed' ? `killed by ${x.signal}` : x.how === 'exited' ? `exited ${x.exitCode}` : x.how === 'never-started' ? 'never started' : 'gone';
  const when = x.noticed ? (x.at ? ` (noticed${ago(x.at, now)})` : '') : ago(x.at, now);
  // up --restart gave up on it: the first words of why ("restart limit reached").
  const ended = d?.processes.find((p) => p.name === x.name)?.restartsEnded;
  return `${x.name} ${how}${when}${x.leftPids.length > 0 ? ', its engine lives on' : ''}${ended ? `, ${ended.reason.split(/[:(]/)[0].trim()}` : ''}`;
}

/** The lines under the table of `up --restart` and `dynamo-dev restart`: how often, the last one's cause and outcome, and why no more. */
export function formatRestarts(d: RunStatusDoc, now: number, columns = Infinity): string[] {
  const out: string[] = [];
  const policy = d.restartPolicy ? ` (--restart on-failure${d.restartPolicy.max === null ? '' : `:${d.restartPolicy.max}`})` : '';
  for (const p of d.processes) {
    const h = p.restartHistory ?? [];
    if (h.length > 0) {
      const last = h[h.length - 1];
      const by = h.every((r) => r.by === 'on-failure') ? policy : h.every((r) => r.by === 'command') ? ' (dynamo-dev restart)' : '';
      const since = ago(last.at, now).trim();
      const cause = last.cause ? `${last.cause}, started again` : 'started again';
      const outcome = last.outcome === 'ready' ? (p.ready ? 'ready again' : 'was ready again') : last.outcome === 'failed' ? `did not come back: ${last.reason ?? 'unknown'}` : 'coming up';
      const mark = last.outcome === 'failed' ? chalk.red('!') : chalk.dim('·');
      out.push(...wrapWords(`  ${mark} ${chalk.bold(p.name)} restarted ${h.length} time${h.length === 1 ? '' : 's'}${by}; last: ${cause} at ${formatClock(last.at)}${since ? ` (${since})` : ''}, ${outcome}`, columns, '    '));
    }
    if (p.restartsEnded && !p.alive) out.push(...wrapWords(`  ${chalk.red('!')} ${chalk.bold(p.name)} not restarted: ${p.restartsEnded.reason}`, columns, '    '));
    if (p.restartBackoff && !p.alive && !p.restartsEnded && Date.parse(p.restartBackoff.at) >= now) out.push(...wrapWords(`  ${chalk.yellow('!')} ${chalk.bold(p.name)} ${backoffWords(p.restartBackoff)}`, columns, '    '));
  }
  return out;
}

/** The lines under the table that say what the run lost, when, why, and what of it still holds the GPU. */
export function formatLosses(d: RunStatusDoc, now: number, columns = Infinity): string[] {
  const out: string[] = [];
  // A run whose stop was cut short (its supervisor died mid-stop) did not lose what that stop
  // ended: those rows say `stopped`, and the orphaned line names what is left and the teardown.
  // Nor did a run whose stop left survivors (they have lines of their own).
  const stopLeft = Boolean(d.orphanedStop) || (d.survivors?.length ?? 0) > 0;
  const lostNow = stopLeft ? d.lost.filter((x) => d.processes.find((p) => p.name === x.name)?.state !== 'stopped') : d.lost;
  for (const x of lostNow) {
    const since = ago(x.at, now);
    const when = x.at ? ` ${x.noticed ? 'noticed at' : 'at'} ${formatClock(x.at)}${since ? ` (${since.trim()})` : ''}` : '';
    const line = x.how === 'gone'
      ? `is gone${when}; how it ended is unknown (no supervisor watched it)`
      : `${describeEnd(x)}${when}`;
    out.push(...wrapWords(`  ${chalk.red('!')} ${chalk.bold(x.name)} ${line}`, columns, '    '));
    if (x.diagnosis) out.push(...wrapWords(`    cause: ${x.diagnosis.title} [${x.diagnosis.code}] at ${x.diagnosis.file}:${x.diagnosis.line}: ${x.diagnosis.text}`, columns, '      '));
    if (x.leftPids.length > 0) {
      const mem = x.gpuMiB !== null ? `, holding ${x.gpuMiB.toLocaleString('en-US')} MiB of GPU memory` : d.gpuChecked ? ' (not listed by nvidia-smi as holding GPU memory)' : ' (GPU memory unknown: nvidia-smi not asked or not answering)';
      out.push(...wrapWords(`    still running: pid ${x.leftPids.join(', ')}${mem}: a leftover, not part of the run`, columns, '      '));
    }
  }
  if (d.lost.length > 0 && !stopLeft) {
    const workers = d.processes.filter((p) => p.role !== 'frontend');
    const lostWorkers = d.lost.filter((x) => x.role !== 'frontend').length;
    const serving = lostWorkers > 0 ? `it serves with ${workers.length - lostWorkers} of ${workers.length} worker${workers.length === 1 ? '' : 's'}; ` : '';
    const left = d.lost.flatMap((x) => x.leftPids);
    const leftovers = left.length > 0 ? ` (with what is left of it; only the leftover: ${chalk.bold(`kill ${left.join(' ')}`)})` : '';
    // Its supervisor can start what it lost again in seconds (issue 31: only teardown and a new up were said).
    const again = d.supervisor.alive
      ? `start ${lostNow.length === 1 ? 'it' : 'each'} again alone: ${lostNow.map((x) => chalk.bold(`dynamo-dev restart ${x.name} --run ${d.id}`)).join('; ')}; or `
      : '';
    out.push(...wrapWords(`    ${serving}${again}end the run: ${chalk.bold(`dynamo-dev teardown --run ${d.id}`)}${leftovers}`, columns, '      '));
  }
  return out;
}

/** "agg-0 (pid 101), agg-1 (pid 102)": the named processes, in the table's order. */
function runningPids(d: RunStatusDoc, names: readonly string[]): string {
  // A process whose leader ended is named by what is left of it (an engine core), not the dead pid.
  const pids = (p: RunStatusDoc['processes'][number]) => (p.alive && p.pid !== null ? [p.pid] : p.pids);
  return d.processes.filter((p) => names.includes(p.name)).map((p) => `${p.name}${pids(p).length > 0 ? ` (pid ${pids(p).join(', ')})` : ''}`).join(', ');
}

/**
 * The line under the table of a run its supervisor is stopping: what still runs, by whom it is
 * being stopped and when SIGKILL comes (the JSON state says `stopped`, where the run is going).
 */
export function formatStopping(d: RunStatusDoc, now: number, columns = Infinity): string[] {
  const s = d.stopping;
  if (!s) return [];
  const running = runningPids(d, s.running);
  const at = s.killAt ? Date.parse(s.killAt) : NaN;
  const kill = !Number.isFinite(at) ? 'then SIGKILL after its grace'
    : at > now ? `SIGKILL in ${Math.ceil((at - now) / 1000)} s for what ignores SIGTERM`
    : 'SIGKILL sent or due now';
  const what = running !== '' ? `${running} still running` : 'its processes are ending';
  return wrapWords(`  ${chalk.yellow('!')} still stopping: its supervisor (pid ${s.supervisorPid}) sent SIGTERM; ${what}; ${kill}`, columns, '    ');
}

/** "2 of 3 processes still running" for a run being stopped (or whose stop was cut short). */
function stillRunning(d: RunStatusDoc): string {
  const n = (d.stopping ?? d.orphanedStop)?.running.length ?? 0;
  const of = d.processes.filter((p) => p.pid !== null).length;
  return `${n} of ${of} process${of === 1 ? '' : 'es'} still running`;
}

const PY_SOURCE: Record<string, string> = {
  managed: ' (the environment dynamo-dev setup made)', given: ' (--python / DYNAMO_DEV_PYTHON)', recipe: " (the recipe's python)",
};

export function formatRunTable(d: RunStatusDoc, o: { columns?: number; gpu?: string | null; now?: number } = {}): string {
  const columns = o.columns ?? Infinity;
  const now = o.now ?? Date.now();
  // A run being stopped is not stopped yet: people read `stopping` (as kubectl's Terminating); the
  // JSON keeps CLI.md's word `stopped` with its `stopping` field (CLI.md's state list has no other).
  const survivors = d.survivors ?? [];
  const state = d.stopping ? chalk.yellow(`stopping (${stillRunning(d)})`)
    : survivors.length > 0 ? paintRunState(d.state, `${d.state} (its stop left ${survivors.length} process${survivors.length === 1 ? '' : 'es'} SIGKILL could not end)`)
    : d.orphanedStop ? paintRunState(d.state, `${d.state} (stop cut short: ${stillRunning(d)})`)
    : d.state === 'degraded' && d.lost.length > 0
      ? paintRunState(d.state, `degraded: ${d.lost.map((x) => lossBrief(x, now, d)).join('; ')}`)
      : paintRunState(d.state);
  const head = [
    chalk.bold(`run ${d.id}`) + (d.name ? ` (${d.name})` : ''),
    d.recipe,
    state,
    // The URL only while the frontend process runs: once it has ended (a stop, a crash) nothing answers there.
    d.live && d.frontendUrl && d.processes.some((p) => p.role === 'frontend' && p.alive) ? chalk.cyan(d.frontendUrl) : '',
    chalk.dim(d.model),
  ].filter(Boolean).join('  ');
  // A process its supervisor has sent SIGTERM is shutting down (READY no: the document's `ready`
  // is false once the run's stop began).
  const ending = (p: RunStatusDoc['processes'][number]) => d.stopping?.running.includes(p.name) ?? false;
  // One whose stop began and whose supervisor died before the end: nothing stops it now.
  const abandoned = (p: RunStatusDoc['processes'][number]) => d.orphanedStop?.running.includes(p.name) ?? false;
  // One of which something outlived SIGKILL: nothing can stop that part now (READY no: its stop began).
  const survived = (p: RunStatusDoc['processes'][number]) => survivors.some((x) => x.name === p.name);
  const rows = [
    ['PROCESS', 'PID', 'ALIVE', 'READY', 'STATE', 'KV TOKENS', 'PORTS', 'UPTIME'].map((h) => chalk.dim(h)),
    ...d.processes.map((p) => [
      p.name,
      p.pid === null ? '-' : String(p.pid),
      yesNo(p.alive),
      yesNo(p.ready),
      ending(p) ? chalk.yellow('stopping') : abandoned(p) ? chalk.red('orphaned') : survived(p) ? chalk.red('survived SIGKILL') : stateCell(p),
      p.kvTokens === null ? '-' : p.kvTokens.toLocaleString('en-US'),
      fmtPorts(p.ports),
      formatDuration(p.uptimeMs),
    ]),
  ];
  const lines = [...wrapWords(head, columns, '  '), ...fitTable(rows, columns, DROP).map((l) => `  ${l}`)];
  for (const u of d.unrecorded ?? []) {
    lines.push(...wrapWords(`  ${chalk.yellow('!')} pid ${u.pid} ${chalk.dim(u.cmd.length > 32 ? `${u.cmd.slice(0, 31)}…` : u.cmd)}: the run's (its marker), in no record`, columns, '    '));
  }
  if (d.live) lines.push(...formatLosses(d, now, columns), ...formatStopping(d, now, columns));
  if (d.live) lines.push(...formatRestarts(d, now, columns));
  if (d.live && d.detached && !d.supervisor.alive && (d.state === 'ready' || d.state === 'degraded')) {
    // Expected of every detached run once `up` has exited: a note, not a warning.
    lines.push(...wrapWords(`  ${chalk.dim('·')} detached: its supervisor (pid ${d.supervisor.pid}) is gone, nothing watches it; a process that dies now is noticed by the next command, without its exit code`, columns, '    '));
  }
  if (o.gpu) lines.push(o.gpu.trimEnd());
  if (survivors.length > 0) {
    for (const x of survivors) {
      const cmd = x.cmd.length > 32 ? `${x.cmd.slice(0, 31)}…` : x.cmd;
      const since = ago(x.at, now).trim();
      lines.push(...wrapWords(`  ${chalk.red('✗')} pid ${x.pid} (${x.name}${cmd && cmd !== x.name ? `, ${cmd}` : ''}) survived SIGKILL at ${formatClock(x.at)}${since ? ` (${since})` : ''}; ${survivorStateText(x.state)}`, columns, '    '));
    }
    const them = survivors.length === 1 ? 'it' : 'them';
    lines.push(...wrapWords(`  ${chalk.red('!')} its stop could not end ${them} and nothing stops ${them} now; try again with:`, columns, '    '));
    lines.push(`    ${chalk.bold(`dynamo-dev teardown --run ${d.id}`)}`);
    lines.push(fitCommand(`    check ${them} with: `, checkCommand(survivors.map((x) => x.pid)), '', columns, '      '));
  } else if (d.state === 'orphaned') {
    const them = d.orphanedStop?.running.length === 1 ? 'it' : 'them';
    const why = d.orphanedStop
      ? `died while stopping it; ${runningPids(d, d.orphanedStop.running)} still running and nothing stops ${them}; stop ${them} with:`
      : 'is gone but processes live; stop them with:';
    lines.push(...wrapWords(`  ${chalk.red('!')} its supervisor (pid ${d.supervisor.pid}) ${why}`, columns, '    '));
    lines.push(`    ${chalk.bold(`dynamo-dev teardown --run ${d.id}`)}`);
  }
  if (d.python) lines.push(...wrapWords(`  python: ${d.python.interpreter}${PY_SOURCE[d.python.source ?? ''] ?? ''}`, columns, '    ').map((l) => chalk.dim(l)));
  // A path is copied: last, and on a terminal whole on a line of its own rather than cut mid-word.
  lines.push(...wrapWords(`  logs: ${d.logsDir}`, columns, '    ').map((l) => chalk.dim(l)));
  return `${lines.join('\n')}\n`;
}

/** One line per run that is not live: id, recipe, state, process count, last change. */
export function formatRunLines(docs: RunStatusDoc[], now: number, columns = Infinity): string {
  const rows = docs.map((d) => {
    const ago = Number.isFinite(Date.parse(d.updatedAt)) ? `${formatDuration(now - Date.parse(d.updatedAt))} ago` : '';
    const n = d.processes.length;
    return [d.id, d.recipe, paintRunState(d.state), chalk.dim(`${n} process${n === 1 ? '' : 'es'}${ago ? `, ${ago}` : ''}`)];
  });
  if (rows.length === 0) return '';
  return `${table(rows).map((l) => `  ${visibleLength(l) + 2 > columns ? truncateWords(l, columns - 2) : l}`).join('\n')}\n`;
}

export function formatStatus(docs: RunStatusDoc[], o: { stateDir: string; single: boolean; now: number; columns?: number; gpu?: Record<string, string | null> }): string {
  if (docs.length === 0) {
    const columns = o.columns ?? Infinity;
    const start = wrapFix(`start one with: ${keepWhole(chalk.bold('dynamo-dev up [RECIPE]'))} (e.g. ${keepWhole('dynamo-dev up agg')})`, columns, '  ');
    return `${[...wrapWords(`no runs recorded in ${o.stateDir}`, columns, '  '), ...start].join('\n')}\n`;
  }
  const full = o.single ? docs : docs.filter((d) => d.live);
  const rest = o.single ? [] : docs.filter((d) => !d.live);
  const parts: string[] = full.map((d) => formatRunTable(d, { columns: o.columns, gpu: o.gpu?.[d.id] ?? null, now: o.now }));
  if (full.length === 0) parts.push(`no live runs\n`);
  if (rest.length > 0) parts.push(`${chalk.bold('recent runs')}\n${formatRunLines(rest, o.now, o.columns)}`);
  return parts.join('\n');
}

