import chalk from 'chalk';
import { EXIT_SIGNATURE, signatureFor } from '../diagnose/signatures.js';
import type { Finding, ScanResult, Severity } from '../diagnose/types.js';
import { wrapFix, wrapWords } from './fit.js';

// Plain-text report of `dynamo-dev diagnose` (colours via chalk; the CLI turns them off for NO_COLOR).
// On a terminal (`columns`) its lines wrap at word boundaries with a hanging indent, as `up`'s
// failure report does; a command, path or flag with its value is never split (fit.ts). Piped, the
// lines stay whole: a script or grep sees one line per field.

const HEADINGS: Record<Severity, string> = { error: 'Errors', warn: 'Warnings', info: 'Info' };
const MARK: Record<Severity, (s: string) => string> = {
  error: (s) => chalk.red(s),
  warn: (s) => chalk.yellow(s),
  info: (s) => chalk.cyan(s),
};
const SYMBOL: Record<Severity, string> = { error: '✗', warn: '!', info: 'i' };

/** How each process of a run ended (run.json), for `diagnose` without paths. */
export interface RunEnd {
  id: string;
  processes: { name: string; state: string; exitCode: number | null; signal: string | null; log: string; started: boolean }[];
}

/** Failed by itself (an exit code or a signal we did not send), not stopped by us. */
export const diedOnItsOwn = (p: RunEnd['processes'][number]): boolean => p.state === 'failed' && (p.exitCode !== null && p.exitCode !== 0 || p.signal !== null);

function endOf(p: RunEnd['processes'][number]): string {
  if (!p.started) return chalk.dim('never started');
  if (diedOnItsOwn(p)) return chalk.red(`failed: ${p.signal ? `killed by ${p.signal}` : `exit code ${p.exitCode}`}`);
  if (p.state === 'failed') return chalk.red('failed (see the run\'s report)');
  return p.state === 'stopped' ? `stopped${p.signal ? ` (${p.signal})` : ''}` : p.state;
}

/** Human report: findings grouped by severity, each with count, first place, line, why and fix; then a footer. */
export function renderDiagnosis(result: ScanResult, ms: number, run: RunEnd | null = null, columns = Infinity): string {
  const wrap = (text: string, indent: string) => wrapWords(text, columns, indent);
  const out: string[] = [];
  if (run) {
    out.push(chalk.bold(`run ${run.id}`));
    const w = Math.max(...run.processes.map((p) => p.name.length));
    for (const p of run.processes) out.push(`  ${p.name.padEnd(w)}  ${endOf(p)}`);
    out.push('');
  }
  for (const sev of ['error', 'warn', 'info'] as const) {
    const group = result.findings.filter((f) => f.severity === sev);
    if (group.length === 0) continue;
    out.push(chalk.bold(`${HEADINGS[sev]} (${group.length})`));
    for (const f of group) out.push(...renderFinding(f, columns), '');
  }
  const crashed = run?.processes.filter(diedOnItsOwn) ?? [];
  // The exits of a run's processes (run.process-exited) are findings too, but no log signature.
  const signed = result.findings.filter((f) => f.code !== EXIT_SIGNATURE.code);
  if (result.findings.length === 0 && crashed.length === 0) out.push(chalk.green('No known failure signature found.'), '');
  else if (signed.length === 0 && crashed.length > 0) {
    out.push(...wrap(`No known failure signature, but ${crashed.map((p) => p.name).join(', ')} failed; read the end of its log:`, '  ').map((l) => chalk.yellow(l)));
    // Each command alone on its line, whole: it is what gets copied.
    for (const p of crashed) out.push(`dynamo-dev logs ${p.name} --run ${run!.id} -n 40`);
    out.push('');
  }
  const n = (sev: Severity) => result.findings.filter((f) => f.severity === sev).length;
  const footer =
    `${result.files} file${result.files === 1 ? '' : 's'}, ${formatBytes(result.bytes)} scanned in ${ms} ms: ` +
    `${n('error')} error${n('error') === 1 ? '' : 's'}, ${n('warn')} warning${n('warn') === 1 ? '' : 's'}, ${n('info')} info`;
  out.push(...wrap(footer, '  ').map((l) => chalk.dim(l)));
  return `${out.join('\n')}\n`;
}

function renderFinding(f: Finding, columns: number): string[] {
  const title = signatureFor(f.code)?.title ?? f.code;
  const times = f.count === 1 ? 'once' : `${f.count.toLocaleString('en-US')} times`;
  // Continuation lines hang under the text after the label, so each field reads as one block.
  return [
    ...wrapWords(`${MARK[f.severity](SYMBOL[f.severity])} ${chalk.bold(f.code)}  ${title}  ${chalk.dim(`(${times})`)}`, columns, '    '),
    ...wrapWords(`    first at ${f.line > 0 ? `${f.file}:${f.line}` : f.file}`, columns, '      '),
    ...wrapWords(`    ${chalk.dim('>')} ${f.text}`, columns, '      '),
    ...wrapWords(`    why: ${f.explanation}`, columns, '         '),
    ...wrapFix(`    ${chalk.bold('fix:')} ${f.fix}`, columns, '         '),
  ];
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}
