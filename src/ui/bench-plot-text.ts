import { METRICS, type MetricKey, type Summary } from '../bench/summary.js';
import { formatMetric } from './bench-metric.js';
import { visibleLength, wrapWords } from './fit.js';

// Pure: the terminal plot of a summary: its headline metrics per variant and concurrency,
// one horizontal bar each, scaled to the largest median of the metric. Unicode eighth blocks on a
// UTF-8 terminal; '#' where the terminal cannot show them. Only measured variants have a bar.


/** The headline metrics that have a number somewhere (a result stored before the means were kept has none of them): what the plots draw. */
export function plottedOf(s: Summary): MetricKey[] {
  const has = s.headline.filter((k) => s.tables.find((t) => t.metric.key === k)?.rows.some((r) => r.cells.some((c) => c.kind === 'value')));
  return has.length > 0 ? has : [...s.headline];
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** A bar of `cells` columns (fractional), in eighth blocks or '#'. */
export function bar(cells: number, ascii: boolean): string {
  const c = Math.max(0, cells);
  if (ascii) return '#'.repeat(Math.round(c));
  const whole = Math.floor(c);
  const eighth = Math.round((c - whole) * 8);
  return eighth === 8 ? '█'.repeat(whole + 1) : '█'.repeat(whole) + EIGHTHS[eighth];
}

export function renderTextPlot(s: Summary, opts: { width: number; ascii: boolean }): string {
  const out: string[] = [];
  const labelWidth = Math.max(...s.tables[0].rows.map((r) => visibleLength(r.label)));
  for (const key of plottedOf(s)) {
    const table = s.tables.find((t) => t.metric.key === key)!;
    const m = METRICS.find((x) => x.key === key)!;
    const medians = table.rows.flatMap((r) => r.cells.flatMap((c) => (c.kind === 'value' ? [c.median] : [])));
    const max = Math.max(0, ...medians);
    const values = table.rows.map((r) => r.cells.map((c) => (c.kind === 'value' ? formatMetric(c.median, m.percent) : c.kind === 'unknown' ? 'unknown' : '-')));
    const valueWidth = Math.max(0, ...values.flat().map((v) => v.length));
    // indent, label, two spaces, bar, space, value: the bar gets what is left (at least 10 columns).
    const room = Math.max(10, opts.width - 2 - labelWidth - 2 - 1 - valueWidth);
    if (out.length > 0) out.push('');
    out.push(...wrapWords(`${m.title} (${m.unit}; ${m.better} is better)`, opts.width, '  '));
    s.concurrency.forEach((c, ci) => {
      out.push(`  concurrency ${c}`);
      table.rows.forEach((r, ri) => {
        const label = r.label + ' '.repeat(labelWidth - visibleLength(r.label));
        if (r.status !== 'measured') {
          out.push(`  ${label}  ${r.status.toUpperCase()}`);
          return;
        }
        const cell = r.cells[ci];
        const b = cell.kind === 'value' && max > 0 ? bar((cell.median / max) * room, opts.ascii) : '';
        out.push(`  ${label}  ${b}${b ? ' ' : ''}${values[ri][ci]}`);
      });
    });
  }
  return `${out.join('\n')}\n`;
}

/** Whether a terminal shows the block characters: a UTF-8 locale (LC_ALL, else LC_CTYPE, else LANG). */
export function utf8Terminal(env: NodeJS.ProcessEnv): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return /utf-?8/i.test(locale);
}
