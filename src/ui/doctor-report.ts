import chalk from 'chalk';
import type { Tally } from '../doctor/runner.js';
import type { CheckOutcome } from '../doctor/types.js';
import type { SystemFacts } from '../host/system/system.js';
import { CPU_ENGINE_WAY, JUDGE_CPU_ENGINE, MOCKER_WAY } from '../doctor/ways-without-gpu.js';
import { MARK, paintStatus } from './marks.js';
import { wrapFix, wrapParts, wrapWords } from './fit.js';

// Plain-text rendering of doctor results; the ink view reuses these strings so a TTY and a pipe
// show the same words.

/** The title and the machine line; on a terminal (`columns`) both wrap at word boundaries, the machine line between its parts first. */
export function formatHeader(sys: SystemFacts | null, target: string, columns = Infinity): string {
  const title = wrapWords(`${chalk.bold('dynamo-dev doctor')}  ${chalk.dim(`recipe ${target}`)}`, columns, '  ');
  const machine = sys ? wrapParts([sys.os, `${sys.cpu} (${sys.cores} cores)`, `${sys.memGiB} GiB RAM`, `Node ${sys.node}`], ' · ', columns, '  ') : [];
  return [...title, ...machine.map((l) => chalk.dim(l))].map((l) => `${l}\n`).join('');
}

/**
 * Under the header on a machine without a GPU: both ways to run there, each with its cost and its
 * commands on a line of their own (copy-paste), the mocker first as the one judged below.
 */
export function formatWaysWithoutGpu(columns = Infinity): string {
  const way = (w: typeof MOCKER_WAY, extra: string[] = []) => [
    ...wrapWords(`  ${chalk.bold(w.name)}: ${w.cost}`, columns, '    '),
    ...wrapWords(`    ${w.commands.join(' && ')}`, columns, '      '),
    ...extra.flatMap((l) => wrapWords(`    ${chalk.dim(l)}`, columns, '      ')),
  ];
  return [
    ...wrapWords('no GPU here: two ways to run (the first is judged below)', columns, '  '),
    ...way(MOCKER_WAY),
    ...way(CPU_ENGINE_WAY, [`judge it: ${JUDGE_CPU_ENGINE} (docs/cpu.md)`]),
  ].map((l) => `${l}\n`).join('');
}

/**
 * One check: mark, title, summary; under a warn or fail its evidence and a fix line. With
 * `columns` (a terminal) lines wrap at word boundaries with a hanging indent, never mid-word; a
 * `quoted command` stays on one line.
 */
export function formatOutcome(o: Pick<CheckOutcome, 'title' | 'status' | 'summary' | 'details' | 'fix'>, width: number, columns = Infinity): string {
  const summary = o.status === 'skip' ? chalk.dim(o.summary) : o.summary;
  const title = chalk.bold(o.title.padEnd(width));
  // Summaries start after the title column when there is room for them there; else under the title.
  const gutter = 2 + width + 2;
  const head = columns - gutter >= 40
    ? wrapWords(`${paintStatus(o.status, MARK[o.status])} ${title}  ${summary}`, columns, ' '.repeat(gutter))
    : [`${paintStatus(o.status, MARK[o.status])} ${chalk.bold(o.title)}`, ...wrapWords(`    ${summary}`, columns, '    ')];
  if (o.status !== 'warn' && o.status !== 'fail') return `${head.join('\n')}\n`;
  const lines = o.details.flatMap((d) => wrapWords(`    ${chalk.dim(d)}`, columns, '      '));
  // wrapFix: a flag or `export` stays with its value (a signature's fix, `export UCX_TLS=...`, reaches logs.errors).
  if (o.fix) lines.push(...wrapFix(`    ${paintStatus(o.status, 'fix:')} ${o.fix}`, columns, '         '));
  return `${[...head, ...lines].join('\n')}\n`;
}

export function formatFooter(t: Tally, durationMs: number, strict: boolean): string {
  const parts = [
    chalk.green(`${t.pass} passed`),
    t.warn ? chalk.yellow(`${t.warn} warned`) : `${t.warn} warned`,
    t.fail ? chalk.red(`${t.fail} failed`) : `${t.fail} failed`,
    chalk.dim(`${t.skip} skipped`),
  ];
  const verdict = t.fail > 0 || (strict && t.warn > 0)
    ? chalk.red.bold('not ready for experiments')
    : t.warn > 0 ? chalk.yellow.bold('ready, with warnings') : chalk.green.bold('ready for experiments');
  return `\n${parts.join(', ')} in ${(durationMs / 1000).toFixed(2)} s: ${verdict}\n`;
}

export function titleWidth(outcomes: { title: string }[]): number {
  return Math.max(0, ...outcomes.map((o) => o.title.length));
}

/** The --json document of CLI.md. */
export function doctorJson(outcomes: CheckOutcome[], ok: boolean, durationMs: number, extra: Record<string, unknown> = {}) {
  return {
    ok,
    durationMs: Math.round(durationMs),
    checks: outcomes.map((o) => ({
      id: o.id, title: o.title, status: o.status, summary: o.summary, details: o.details, fix: o.fix,
      evidence: o.evidence, durationMs: o.durationMs,
    })),
    ...extra,
  };
}
