import type { BenchResult, BenchVariant } from '../bench/result.js';
import { COMPARE_LETTERS, summarize, summarizeCompare, type Cell, type MetricInfo, type MetricTable, type Summary, type SummaryRow } from '../bench/summary.js';
import { formatDuration } from '../format-duration.js';
import { visibleLength, wrapWords } from './fit.js';

// Pure: the text of `bench`, `bench show` and `bench compare`. Everything comes from the stored
// document (no clock, no host): the same document gives the same bytes. `width` null = piped:
// whole lines; a number = a terminal: tables split by concurrency and prose wrapped to fit.

export interface RenderOptions {
  /** Terminal columns; null when piped (each line whole). */
  width: number | null;
}

/** A number as the report shows it: 3 significant-ish digits (212, 38.2, 4.12); a share as a percentage. */
export function formatMetric(x: number, percent: boolean): string {
  if (percent) return `${(x * 100).toFixed(1)}%`;
  const a = Math.abs(x);
  return x.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

export const formatRatio = (r: number): string => `${r.toFixed(2)}x`;

/** A cell in three parts, each aligned in its own sub-column: median, (min-max), ratio. */
function cellParts(cell: Cell, m: MetricInfo): [string, string, string] {
  if (cell.kind === 'none') return ['-', '', ''];
  if (cell.kind === 'unknown') return ['unknown', '', ''];
  const f = (x: number) => formatMetric(x, m.percent);
  return [f(cell.median), cell.repeats > 1 ? `(${f(cell.min)}-${f(cell.max)})` : '', cell.ratio === null ? '' : formatRatio(cell.ratio)];
}

const statusWord = (row: SummaryRow) => row.status.toUpperCase();

/** Wraps on a terminal; whole when piped. */
const fit = (line: string, width: number | null, indent: string): string[] => (width === null || visibleLength(line) <= width ? [line] : wrapWords(line, width, indent));

/** Groups of column indexes whose cells fit the width beside the label column (at least one each). */
function columnGroups(labelWidth: number, colWidths: number[], width: number | null): number[][] {
  if (width === null) return [colWidths.map((_, i) => i)];
  const groups: number[][] = [];
  let cur: number[] = [];
  let used = labelWidth;
  colWidths.forEach((w, i) => {
    if (cur.length > 0 && used + 3 + w > width) {
      groups.push(cur);
      cur = [];
      used = labelWidth;
    }
    cur.push(i);
    used += 3 + w;
  });
  if (cur.length > 0) groups.push(cur);
  return groups;
}

function renderTable(table: MetricTable, s: Summary, width: number | null): string[] {
  const m = table.metric;
  const unit = m.percent ? 'share of prompt tokens from the prefix cache' : m.unit;
  const base = s.baseline ? `, ratio to ${s.baseline}` : '';
  const out = fit(`${m.title} (${unit}; ${m.better} is better; median (min-max) over repeats${base})`, width, '  ');
  const labelWidth = Math.max('variant'.length, ...table.rows.map((r) => visibleLength(r.label)));
  const heads = s.concurrency.map((c) => `concurrency ${c}`);
  const parts = table.rows.map((r) => r.cells.map((c) => cellParts(c, m)));
  const measured = parts.filter((p) => p.length > 0);
  // Per concurrency: the widths of the median (right-aligned), spread and ratio sub-columns.
  const sub = heads.map((_, i) => [0, 1, 2].map((k) => Math.max(0, ...measured.map((p) => visibleLength(p[i][k])))));
  const joinParts = (p: [string, string, string], i: number) => {
    const [w0, w1, w2] = sub[i];
    return [' '.repeat(w0 - visibleLength(p[0])) + p[0], w1 ? p[1] + ' '.repeat(w1 - visibleLength(p[1])) : '', w2 ? ' '.repeat(w2 - visibleLength(p[2])) + p[2] : ''].filter((x, k) => k === 0 || sub[i][k] > 0).join('  ');
  };
  const texts = parts.map((p) => p.map((x, i) => joinParts(x, i)));
  const colWidths = heads.map((h, i) => Math.max(visibleLength(h), ...texts.filter((t) => t.length > 0).map((t) => visibleLength(t[i]))));
  const groups = columnGroups(labelWidth, colWidths, width);
  const pad = (t: string, w: number) => t + ' '.repeat(Math.max(0, w - visibleLength(t)));
  groups.forEach((g, gi) => {
    if (gi > 0) out.push('');
    out.push(`${pad('variant', labelWidth)}   ${g.map((i) => pad(heads[i], colWidths[i])).join('   ')}`.trimEnd());
    table.rows.forEach((r, ri) => {
      if (r.status !== 'measured') {
        // The status alone: its reason is said once, under the counts (not six times, once per table).
        out.push(`${pad(r.label, labelWidth)}   ${statusWord(r)}`);
        return;
      }
      out.push(`${pad(r.label, labelWidth)}   ${g.map((i) => pad(texts[ri][i], colWidths[i])).join('   ')}`.trimEnd());
    });
  });
  return out;
}

const MARK = { pass: '✓', fail: '✗', unknown: '?' } as const;

function renderGates(rows: { label: string; variant: BenchVariant }[], width: number | null): string[] {
  const out = ['validity gates'];
  const labelWidth = Math.max(...rows.map((r) => visibleLength(r.label)));
  const indent = ' '.repeat(labelWidth + 4);
  for (const { label, variant: v } of rows) {
    const lead = label + ' '.repeat(labelWidth - visibleLength(label) + 1);
    if (v.gates.length === 0) {
      // A missing variant's reason often says 'not run' itself: said once.
      const text = v.status === 'missing'
        ? `not run${v.reason ? ` (${v.reason.replace(/^not run: /, '')})` : ''}`
        : `none judged${v.reason ? ` (${v.status}: ${v.reason})` : ''}`;
      out.push(...fit(`${lead} - ${text}`, width, indent));
      continue;
    }
    const notPass = v.gates.filter((g) => g.status !== 'pass');
    const passed = v.gates.length - notPass.length;
    let first = true;
    const line = (text: string) => {
      out.push(...fit(`${first ? lead : ' '.repeat(labelWidth + 1)} ${text}`, width, indent));
      first = false;
    };
    for (const g of notPass) line(`${MARK[g.status]} ${g.id}: ${g.summary}`);
    if (passed > 0) line(`${MARK.pass} ${notPass.length === 0 ? `all ${passed} pass` : `${passed} other${passed === 1 ? '' : 's'} pass`} (${v.gates.filter((g) => g.status === 'pass').map((g) => g.id).join(', ')})`);
  }
  return out;
}

/** `2026-12-05 10:15:00 UTC` from an ISO date (the text itself when unparsable): UTC, so no host's zone enters the bytes. */
export function formatUtc(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function took(doc: BenchResult): string {
  if (doc.endedAt === null) return 'not finished';
  const ms = Date.parse(doc.endedAt) - Date.parse(doc.startedAt);
  return Number.isFinite(ms) && ms >= 0 ? `took ${formatDuration(ms)}` : `ended ${formatUtc(doc.endedAt)}`;
}

/** The machine and versions a result was measured with, one line. */
export function machineLine(doc: BenchResult): string {
  const m = doc.machine;
  const gpu = m.gpu ? `GPU ${m.gpu.index} ${m.gpu.name} (${m.gpu.totalMiB} MiB)` : 'no GPU';
  const v = (name: string, x: string | null) => `${name} ${x ?? 'unknown'}`;
  // A mocker run has no vLLM to know the version of: said so rather than 'unknown'.
  const vllm = m.engine === 'mocker' ? 'vLLM not used (mocker engine)' : v('vLLM', m.vllm);
  return [gpu, v('driver', m.driver), v('CUDA', m.cudaDriver), v('Dynamo', m.dynamo), vllm, v('AIPerf', m.aiperf), `Python ${m.python}`].join(' · ');
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function headerLines(doc: BenchResult, width: number | null, letter?: string): string[] {
  const what = doc.preset ? `preset ${doc.preset}` : `recipes ${[...new Set(doc.variants.map((v) => v.recipe))].join(', ')}`;
  const lines = [
    `${letter ? `${letter} = ` : ''}bench ${doc.id} · ${what}`,
    `started ${formatUtc(doc.startedAt)}, ${took(doc)}${doc.interrupted ? ', INTERRUPTED' : ''}`,
    `machine: ${machineLine(doc)}`,
    `load: ${plural(doc.requests, 'request')} per run, ${plural(doc.repeats, 'repeat')}, concurrency ${doc.concurrency.join(', ')}, seed ${doc.seed}`,
    `command: dynamo-dev bench ${doc.argv.join(' ')}`,
  ];
  const ind = letter ? '      ' : '  ';
  return lines.flatMap((l, i) => fit(i === 0 || !letter ? l : `    ${l}`, width, ind));
}

function countsLine(s: Summary): string {
  const parts = (['measured', 'invalid', 'failed', 'missing'] as const).filter((k) => s.counts[k] > 0).map((k) => `${s.counts[k]} ${k}`);
  return `variants: ${parts.join(', ') || 'none'}`;
}

function body(s: Summary, rows: { label: string; variant: BenchVariant }[], width: number | null): string[] {
  const out: string[] = [countsLine(s)];
  // Each variant without numbers, once, with its reason; the tables then show only its status.
  for (const r of rows) {
    if (r.variant.status === 'measured') continue;
    out.push(...fit(`  ${r.label}: ${r.variant.status.toUpperCase()}${r.variant.reason ? `: ${r.variant.reason}` : ''}`, width, '      '));
  }
  if (s.baseline === null) out.push(...fit('no variant was measured: no numbers to show', width, '  '));
  for (const t of s.tables) out.push('', ...renderTable(t, s, width));
  out.push('', ...renderGates(rows, width));
  if (s.missing.length > 0) out.push('', ...fit(`missing (the bench was interrupted before them): ${s.missing.join(', ')}`, width, '  '));
  return out;
}

/** The report of one stored result (bench, bench show). Ends with a newline. */
export function renderReport(doc: BenchResult, opts: RenderOptions): string {
  const s = summarize(doc);
  const rows = doc.variants.map((variant) => ({ label: variant.name, variant }));
  return `${[...headerLines(doc, opts.width), ...body(s, rows, opts.width)].join('\n')}\n`;
}

/** Two stored results side by side (bench compare): A's variants, then B's, ratios against the first measured. */
export function renderCompare(a: BenchResult, b: BenchResult, opts: RenderOptions): string {
  const s = summarizeCompare(a, b);
  const rows = [a, b].flatMap((doc, i) => doc.variants.map((variant) => ({ label: `${COMPARE_LETTERS[i]} ${variant.name}`, variant })));
  const head = [...headerLines(a, opts.width, COMPARE_LETTERS[0]), ...headerLines(b, opts.width, COMPARE_LETTERS[1])];
  const notes: string[] = [];
  if (machineLine(a) !== machineLine(b)) notes.push(...fit('note: the two results were measured on different machines or versions: compare ratios with care', opts.width, '  '));
  if (a.requests !== b.requests || a.seed !== b.seed) notes.push(...fit('note: the two results differ in requests per run or seed', opts.width, '  '));
  return `${[...head, ...notes, ...body(s, rows, opts.width)].join('\n')}\n`;
}
