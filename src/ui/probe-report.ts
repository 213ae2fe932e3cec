import chalk from 'chalk';
import type { ProbeDocument } from '../probe/document.js';
import type { VerdictCode } from '../probe/verdict.js';
import { keepWhole, wrapFix } from './fit.js';

// Plain-text rendering of a probe result (the same document --json prints). On a terminal
// (`columns` finite) long lines wrap at word boundaries with a hanging indent and commands stay
// whole; piped (Infinity) every line stays whole, for grep.

/** The lines of `text` fitted to `columns`, continuation lines under `hang`. */
const fitted = (text: string, columns: number, hang: string): string[] => (Number.isFinite(columns) ? wrapFix(text, columns, hang) : [text]);

const pct = (x: number | null) => (x === null ? 'n/a' : `${Math.round(x * 100)}%`);
const ms = (x: number | null) => (x === null ? 'n/a' : `${x < 10 ? x.toFixed(1) : Math.round(x)} ms`);

const VERDICT_MARK: Record<VerdictCode, string> = { works: '✓', 'random-level': '✗', inconclusive: '!' };
function paintVerdict(code: VerdictCode, text: string): string {
  return code === 'works' ? chalk.green(text) : code === 'random-level' ? chalk.red(text) : chalk.yellow(text);
}

export function formatProbeHeader(url: string, model: string, s: { prefixes: number; repeats: number; prefixTokens: number }, columns = Infinity): string {
  return [
    ...fitted(`${chalk.bold('dynamo-dev probe')}  ${url}  ${chalk.dim(`model ${model}`)}`, columns, '  '),
    ...fitted(chalk.dim(`${s.prefixes} prefixes of ~${s.prefixTokens} tokens, each sent ${s.repeats} times with a different tail, one request at a time`), columns, '  '),
  ].map((l) => `${l}\n`).join('');
}

export function formatProbeReport(d: ProbeDocument, columns = Infinity): string {
  const out: string[] = [''];
  // A row of the summary: continuation lines under its value.
  const row = (text: string) => out.push(...fitted(text, columns, ' '.repeat(20)));
  const label = (t: string) => chalk.bold(t.padEnd(20));
  // The run's process names for worker ids (agg-0); short names for ids no process was found for (u64), with a legend.
  const names = d.workerNames ?? {};
  const short = new Map(d.workers.map((w, i) => [w, names[w] ?? `w${i + 1}`]));
  // No method when nothing was judged (every request failed): then no "by ..." either.
  const by = d.method === null ? '' : d.method === 'ttft' ? 'by first-token time' : d.method === 'mixed' ? 'by cached_tokens and first-token time' : 'by cached_tokens';
  row(`${label('hit rate of repeats')}${d.hits}/${d.repeatsJudged} (${pct(d.hitRate)})${by ? ` ${chalk.dim(by)}` : ''}` +
    (d.randomHitRate !== null && d.workers.length > 1 ? chalk.dim(`; random routing over ${d.workers.length} workers: <= ${pct(d.randomHitRate)}`) : ''));
  out.push(`${label('first repeat')}${pct(d.firstRepeatHitRate)} hit`);
  if (d.workers.length > 0) {
    row(`${label('workers per prefix')}${d.meanWorkersPerPrefix?.toFixed(1)} on average, ${d.workers.length} worker${d.workers.length === 1 ? '' : 's'} seen; ` +
      `${pct(d.affinity)} of repeats on the prefix's first worker` + (d.workers.length > 1 ? chalk.dim(` (random: ${pct(d.randomAffinity)})`) : ''));
  } else {
    out.push(`${label('workers per prefix')}${chalk.dim('unknown: the frontend reports no worker_id')}`);
  }
  row(`${label('first-token time')}first sends ${ms(d.ttft.firstMedianMs)}, repeats ${ms(d.ttft.repeatMedianMs)} ${chalk.dim(`(median; hits ${ms(d.ttft.hitMedianMs)}, misses ${ms(d.ttft.missMedianMs)})`)}`);
  if (d.requests.failed > 0) {
    const firstError = d.sends.find((s) => !s.ok)?.error;
    row(`${label('failed requests')}${chalk.red(`${d.requests.failed} of ${d.requests.sent}`)}${firstError ? chalk.dim(` (first: ${firstError})`) : ''}`);
  }

  out.push('');
  out.push(chalk.dim(`prefix  workers${' '.repeat(Math.max(0, 12 - 7))}hits  cached tokens per send`));
  for (const p of d.prefixes) {
    const ws = p.workers.length ? p.workers.map((w) => short.get(w) ?? w).join(',') : '?';
    const cached = p.cachedTokens.map((c) => (c === null ? '-' : String(c))).join(' ');
    const ttft = p.ttftMs.map((t) => (t === null ? '-' : ms(t).replace(' ms', ''))).join(' ');
    const detail = p.cachedTokens.some((c) => c !== null) ? cached : chalk.dim(`ttft ms: ${ttft}`);
    out.push(`${String(p.prefix + 1).padStart(6)}  ${ws.padEnd(12)}${`${p.hits}/${p.repeats}`.padStart(4)}  ${detail}`);
  }
  if (d.workers.length > 0) out.push(...fitted(chalk.dim(`workers: ${d.workers.map((w) => `${short.get(w)} = ${w}`).join(', ')}`), columns, '  '));

  out.push('');
  const v = d.verdict;
  out.push(...fitted(`${paintVerdict(v.code, VERDICT_MARK[v.code])} ${chalk.bold(v.summary)}`, columns, '  '));
  for (const line of v.details) out.push(...fitted(`    ${chalk.dim(line)}`, columns, '    '));
  for (const n of d.notes) out.push(...fitted(`    ${chalk.dim(`note: ${n}`)}`, columns, '      '));
  out.push(...fitted(v.next ? `${paintVerdict(v.code, 'next:')} ${Number.isFinite(columns) ? keepWhole(v.next) : v.next}` : `${chalk.green('next:')} nothing to fix`, columns, '  '));
  return `${out.join('\n')}\n`;
}
