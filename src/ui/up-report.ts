import chalk from 'chalk';
import type { UpEvent } from '../run/events.js';
import type { Diagnosis } from '../run/diagnosis.js';

// The words of `up`'s summary and failure report, shared by the plain renderer and the ink view.

type Ev<K extends UpEvent['event']> = Extract<UpEvent, { event: K }>;

const num = (n: number | null) => (n === null ? '-' : n.toLocaleString('en-US'));

export function formatReady(e: Ev<'ready'>): string {
  const out: string[] = [];
  out.push(chalk.green.bold(`✓ ready in ${(e.ms / 1000).toFixed(1)} s`) + `  run ${e.runId}`);
  out.push(`  url     ${e.url}`);
  out.push(`  model   ${e.model}`);
  out.push(`  try     ${e.curl}`);
  const w = Math.max(...e.workers.map((x) => x.name.length), 8);
  for (const x of e.workers) {
    const f = x.gpuMemoryUtilization !== null ? `gpu ${x.gpuMemoryUtilization}` : 'no gpu';
    out.push(`  ${x.name.padEnd(w)}  ${x.kvTokens !== null ? `KV ${num(x.kvTokens)} tokens` : 'no KV line'}  ${f}`);
  }
  out.push('  logs');
  for (const [name, path] of Object.entries(e.logs)) out.push(`    ${name.padEnd(w)}  ${path}`);
  out.push(e.detached
    ? `  detached: stop with \`dynamo-dev teardown --run ${e.runId}\`; status: \`dynamo-dev status\``
    : '  supervising: Ctrl-C stops every process');
  return `${out.join('\n')}\n`;
}

export function formatDiagnosis(d: Diagnosis, indent = '  '): string[] {
  return [
    `${indent}${chalk.bold('cause:')} ${d.title} [${d.code}]`,
    `${indent}${chalk.dim(`${d.file}:${d.line}:`)} ${d.text.trim()}`,
    `${indent}${d.explanation}`,
    `${indent}${chalk.bold('fix:')} ${d.fix}`,
  ];
}

function lastLines(lines: string[], indent = '  ', n = 12): string[] {
  const tail = lines.slice(-n);
  if (tail.length === 0) return [];
  return [`${indent}last lines of the log:`, ...tail.map((l) => `${indent}${chalk.dim('│')} ${l}`)];
}

export function formatExited(e: Ev<'exited'>): string {
  const how = e.error ? `could not be started: ${e.error}`
    : `${e.signal ? `was killed by ${e.signal}` : `exited with code ${e.code}`} ${e.afterReady ? 'after the run was ready' : 'before it was ready'}`;
  const out = [chalk.red.bold(`✗ ${e.process} ${how}`)];
  if (e.diagnosis) out.push(...formatDiagnosis(e.diagnosis));
  else if (!e.error) out.push('  no known failure signature in its log (see the last lines)');
  out.push(...lastLines(e.lastLines));
  out.push(`  log: ${e.log}`);
  return `${out.join('\n')}\n`;
}

/** The failure block; `seen` says the process's exit report was already printed. */
export function formatFailed(e: Ev<'failed'>, seen: boolean): string {
  const out = [chalk.red.bold(`✗ up failed: ${e.reason}`)];
  if (!seen) {
    if (e.diagnosis) out.push(...formatDiagnosis(e.diagnosis));
    if (e.hint) out.push(`  ${chalk.bold('what to do:')} ${e.hint}`);
    out.push(...lastLines(e.lastLines));
    if (e.log) out.push(`  log: ${e.log}`);
  } else if (e.hint) {
    out.push(`  ${chalk.bold('what to do:')} ${e.hint}`);
  }
  return `${out.join('\n')}\n`;
}

export function formatStopped(e: Ev<'stopped'>): string {
  const parts = e.stopped.map((s) => `${s.name}${s.signal ? ` ${s.signal}` : ''} ${s.ms} ms${s.note ? ` (${s.note})` : ''}`);
  const out = [`stopped ${e.stopped.length} process group(s)${parts.length ? `: ${parts.join(', ')}` : ''}`];
  for (const r of e.remaining) out.push(chalk.red(`  still running: ${r.name} pid ${r.pid} ${r.cmd}`));
  if (e.remaining.length) out.push('  fix: dynamo-dev teardown --orphans');
  return `${out.join('\n')}\n`;
}

export function formatPreflightFailures(e: Ev<'preflight'>): string {
  const out: string[] = [];
  for (const c of e.checks) {
    if (c.status !== 'fail' && c.status !== 'warn') continue;
    const mark = c.status === 'fail' ? chalk.red('✗') : chalk.yellow('!');
    out.push(`${mark} ${chalk.bold(c.title)}  ${c.summary}`);
    for (const d of c.details) out.push(`    ${chalk.dim(d)}`);
    if (c.fix) out.push(`    fix: ${c.fix}`);
  }
  const fails = e.checks.filter((c) => c.status === 'fail').length;
  out.push(e.ok
    ? `preflight: ${e.checks.length} checks, nothing stops the start`
    : chalk.red.bold(`preflight failed: ${fails} check(s) would stop the start; nothing was started (skip with --no-preflight)`));
  return `${out.join('\n')}\n`;
}
