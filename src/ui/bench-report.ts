import type { BenchResult, BenchVariant } from '../bench/result.js';
import { renderTransport } from './bench-transport.js';
import { COMPARE_LETTERS, ERROR_FLAG_RATE, METRICS, summarize, summarizeCompare, type Cell, type ErrorCell, type MetricInfo, type MetricTable, type Summary, type SummaryRow } from '../bench/summary.js';
import { controlOutcome } from '../bench/controls.js';
import { renderDistribution } from './bench-distribution.js';
import { formatMetric } from './bench-metric.js';
import { formatDuration } from '../format-duration.js';
import { visibleLength, wrapWords } from './fit.js';

// Pure: the text of `bench`, `bench show` and `bench compare`. Everything comes from the stored
// document (no clock, no host): the same document gives the same bytes. `width` null = piped:
// whole lines; a number = a terminal: tables split by concurrency and prose wrapped to fit.

export interface RenderOptions {
  /** Terminal columns; null when piped (each line whole). */
  width: number | null;
}

export { formatMetric } from './bench-metric.js';

export const formatRatio = (r: number): string => `${r.toFixed(2)}x`;

/** Failed requests of a cell, short, for every table: '2 err' (empty when none). */
const errMark = (e: ErrorCell | null | undefined): string => (e && e.failed > 0 ? `${e.failed} err${e.failed / e.sent > ERROR_FLAG_RATE ? '!' : ''}` : '');

/** A cell in four parts, each aligned in its own sub-column: median, (min-max), ratio, failed requests. */
function cellParts(cell: Cell, m: MetricInfo, err: ErrorCell | null | undefined): [string, string, string, string] {
  if (cell.kind === 'none') return ['-', '', '', errMark(err)];
  if (cell.kind === 'unknown') return ['unknown', '', '', errMark(err)];
  const f = (x: number) => formatMetric(x, m.percent);
  return [f(cell.median), cell.repeats > 1 ? `(${f(cell.min)}-${f(cell.max)})` : '', cell.ratio === null ? '' : formatRatio(cell.ratio), errMark(err)];
}

const statusWord = (row: SummaryRow) => (row.control?.kind === 'as-expected' ? 'INVALID (control, as expected)' : row.status.toUpperCase());

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
  const parts = table.rows.map((r) => r.cells.map((c, i) => cellParts(c, m, s.errors.get(r.label)?.[i])));
  const measured = parts.filter((p) => p.length > 0);
  // Per concurrency: the widths of the median (right-aligned), spread, ratio and errors sub-columns.
  const sub = heads.map((_, i) => [0, 1, 2, 3].map((k) => Math.max(0, ...measured.map((p) => visibleLength(p[i][k])))));
  const joinParts = (p: [string, string, string, string], i: number) => {
    const [w0, w1, w2, w3] = sub[i];
    return [
      ' '.repeat(w0 - visibleLength(p[0])) + p[0], w1 ? p[1] + ' '.repeat(w1 - visibleLength(p[1])) : '',
      w2 ? ' '.repeat(w2 - visibleLength(p[2])) + p[2] : '', w3 ? p[3] + ' '.repeat(w3 - visibleLength(p[3])) : '',
    ].filter((x, k) => k === 0 || sub[i][k] > 0).join('  ');
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

/** The machine and versions a result was measured with, one line; `short`: the Python version without the interpreter's path (the plot). */
export function machineLine(doc: BenchResult, short = false): string {
  const m = doc.machine;
  const gpu = m.gpu ? `GPU ${m.gpu.index} ${m.gpu.name} (${m.gpu.totalMiB} MiB)` : 'no GPU';
  const v = (name: string, x: string | null) => `${name} ${x ?? 'unknown'}`;
  // A mocker run has no vLLM to know the version of: said so rather than 'unknown'.
  const vllm = m.engine === 'mocker' ? 'vLLM not used (mocker engine)' : v('vLLM', m.vllm);
  return [gpu, v('driver', m.driver), v('CUDA', m.cudaDriver), v('Dynamo', m.dynamo), vllm, v('AIPerf', m.aiperf), pythonOf(m, short)].join(' · ');
}

function pythonOf(m: BenchResult['machine'], short: boolean): string {
  if (m.pythonVersion) return short ? `Python ${m.pythonVersion}` : `Python ${m.pythonVersion} (${m.python})`;
  // Stored before the version was kept: a venv's folder often names it (python3.11); else the path, as it was.
  const named = /python(\d+\.\d+)$/.exec(m.python);
  return short && named ? `Python ${named[1]}` : `Python ${m.python}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** How the load runs were kept comparable (issue 31): said for every result, also the older ones that were not. */
/**
 * The load of a result: requests per run with the shared-prefix pool where the result kept it (how
 * many sends per prefix the hit share can reach), repeats, concurrency, seed.
 */
export function loadText(doc: BenchResult): string {
  const p = doc.load?.prefixes;
  const pool = p ? ` (${p.count} shared prefixes of ${p.tokens.toLocaleString('en-US')} tokens, ~${Math.round(doc.requests / p.count)} sends each)` : '';
  return `${plural(doc.requests, 'request')} per run${pool}, ${plural(doc.repeats, 'repeat')}, concurrency ${doc.concurrency.join(', ')}, seed ${doc.seed}`;
}

export function isolationLine(doc: BenchResult): string {
  const runs = doc.concurrency.length * doc.repeats;
  if (doc.isolation === 'fresh-prefixes') {
    return runs === 1
      ? 'cache: one load run per variant, from a cold prefix cache (each variant freshly started)'
      : `cache: each load run from a cold prefix cache: its own prompts and prefixes (AIPerf --random-seed ${doc.seed}..${doc.seed + runs - 1}, the same for every variant)`;
  }
  return runs === 1
    ? 'cache: one load run per variant, from a cold prefix cache (each variant freshly started)'
    : 'cache: WARM after each variant\'s first load run (stored before each run had its own prompts): later concurrencies and repeats met prefixes already cached';
}

function headerLines(doc: BenchResult, width: number | null, letter?: string): string[] {
  const what = doc.preset ? `preset ${doc.preset}` : `recipes ${[...new Set(doc.variants.map((v) => v.recipe))].join(', ')}`;
  const lines = [
    `${letter ? `${letter} = ` : ''}bench ${doc.id} · ${what}`,
    `started ${formatUtc(doc.startedAt)}, ${took(doc)}${doc.interrupted ? ', INTERRUPTED' : ''}`,
    `machine: ${machineLine(doc)}`,
    `load: ${loadText(doc)}`,
    isolationLine(doc),
    `command: dynamo-dev bench ${doc.argv.join(' ')}`,
  ];
  const ind = letter ? '      ' : '  ';
  return lines.flatMap((l, i) => fit(i === 0 || !letter ? l : `    ${l}`, width, ind));
}

function countsLine(s: Summary, rows: { variant: BenchVariant }[]): string {
  const expected = rows.filter((r) => controlOutcome(r.variant)?.kind === 'as-expected').length;
  const counts = { ...s.counts, invalid: s.counts.invalid - expected };
  const parts = (['measured', 'invalid', 'failed', 'missing'] as const).filter((k) => counts[k] > 0).map((k) => `${counts[k]} ${k}`);
  if (expected > 0) parts.push(`${expected} control${expected === 1 ? '' : 's'} invalid as expected`);
  return `variants: ${parts.join(', ') || 'none'}`;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Failed requests per variant and concurrency, per run; a variant above the threshold flagged with AIPerf's texts. */
function renderErrors(s: Summary, width: number | null): string[] {
  const labels = [...s.errors.keys()];
  if (labels.length === 0) return [];
  const out = fit(`failed requests (of those sent; per run in [ ]; flagged above ${pct(ERROR_FLAG_RATE)})`, width, '  ');
  const lw = Math.max('variant'.length, ...labels.map(visibleLength));
  const cellText = (e: ErrorCell | null) => (e === null ? '-' : `${e.failed} of ${e.sent} (${pct(e.sent ? e.failed / e.sent : 0)})${e.perRun.length > 1 ? ` [${e.perRun.join(' ')}]` : ''}${e.sent && e.failed / e.sent > ERROR_FLAG_RATE ? ' !' : ''}`);
  const texts = labels.map((l) => s.errors.get(l)!.map(cellText));
  const heads = s.concurrency.map((c) => `concurrency ${c}`);
  const cw = heads.map((h, i) => Math.max(visibleLength(h), ...texts.map((t) => visibleLength(t[i]))));
  const pad = (t: string, w: number) => t + ' '.repeat(Math.max(0, w - visibleLength(t)));
  for (const g of columnGroups(lw, cw, width)) {
    out.push(`${pad('variant', lw)}   ${g.map((i) => pad(heads[i], cw[i])).join('   ')}`.trimEnd());
    labels.forEach((l, li) => out.push(`${pad(l, lw)}   ${g.map((i) => pad(texts[li][i], cw[i])).join('   ')}`.trimEnd()));
  }
  for (const l of labels) {
    const cells = s.errors.get(l)!.filter((e): e is ErrorCell => e !== null);
    const failed = cells.reduce((n, e) => n + e.failed, 0);
    const sent = cells.reduce((n, e) => n + e.sent, 0);
    if (failed === 0 || failed / sent <= ERROR_FLAG_RATE) continue;
    const byText = new Map<string, number>();
    for (const e of cells) for (const t of e.texts) byText.set(t.text, (byText.get(t.text) ?? 0) + t.count);
    out.push(...fit(`! ${l}: ${failed} of ${sent} requests failed (${pct(failed / sent)}); its numbers are of the ${sent - failed} that completed`, width, '    '));
    if (byText.size === 0) out.push(...fit('    AIPerf recorded no error text (see the aiperf.log beside each export)', width, '      '));
    for (const [text, n] of [...byText].sort((a, b) => b[1] - a[1])) out.push(...fit(`    ${n} x "${text}"`, width, '      '));
  }
  return out;
}

/** Percentiles on a two-valued TTFT, said where they sit (issue 31: p50 1.87x at 36 requests, 1.00x at 72). */
function renderModes(s: Summary, width: number | null): string[] {
  if (s.modes.length === 0) return [];
  const out: string[] = [];
  const on = s.modes.filter((m) => m.onGap.length > 0);
  const range = (x: { min: number; max: number }) => `${formatMetric(x.min, false)}-${formatMetric(x.max, false)} ms`;
  out.push(...fit(`note: TTFT is two-valued (cache hits fast, misses slow) in ${s.modes.length} of the cells above; a percentile there jumps from one mode to the other when the share of fast requests crosses it, so compare the means and the hit share, not p50/p90 ratios`, width, '  '));
  for (const m of on) {
    const share = m.lower.n / (m.lower.n + m.upper.n);
    out.push(...fit(`  ${m.label} at concurrency ${m.concurrency}: ${pct(share)} at ${range(m.lower)}, the rest at ${range(m.upper)}: ${m.onGap.map((p) => `p${p}`).join(' and ')} ${m.onGap.length === 1 ? 'sits' : 'sit'} on the gap between them`, width, '    '));
  }
  return out;
}

function body(s: Summary, rows: { label: string; variant: BenchVariant }[], width: number | null): string[] {
  const out: string[] = [countsLine(s, rows)];
  // Each variant without numbers, once, with its reason; the tables then show only its status.
  for (const r of rows) {
    if (r.variant.status === 'measured' && !r.variant.control) continue;
    const control = controlOutcome(r.variant);
    const text = control ? `${control.kind === 'unexpected' ? 'UNEXPECTED ' : ''}${control.text}` : `${r.variant.status.toUpperCase()}${r.variant.reason ? `: ${r.variant.reason}` : ''}`;
    out.push(...fit(`  ${r.label}: ${text}`, width, '      '));
  }
  const transport = renderTransport(rows, width);
  if (transport.length > 0) out.push('', ...transport);
  // Nothing measured: tables of nothing but FAILED would say again, in 30 lines, what one line says.
  if (s.baseline === null) out.push(...fit('no variant was measured: no numbers to show', width, '  '));
  else out.push(...measuredTables(s, width));
  out.push('', ...renderGates(rows, width));
  if (s.missing.length > 0) out.push('', ...fit(`missing (the bench was interrupted before them): ${s.missing.join(', ')}`, width, '  '));
  return out;
}

/** The headline tables, the distribution, modes and errors, then the other metrics: a result with numbers. */
function measuredTables(s: Summary, width: number | null): string[] {
  const head = s.tables.filter((t) => s.headline.includes(t.metric.key)).sort((a, b) => s.headline.indexOf(a.metric.key) - s.headline.indexOf(b.metric.key));
  const out = ['', ...fit(`headline: ${head.map((t) => t.metric.title).join(', ')}`, width, '  ')];
  // A metric no measured variant has (a result stored before it was kept) is one line, not a table of 'unknown'.
  const known = (t: MetricTable) => t.rows.some((r) => r.cells.some((c) => c.kind === 'value'));
  const notKept = (ts: MetricTable[]) => ts.filter((t) => !known(t) && t.rows.some((r) => r.cells.some((c) => c.kind === 'unknown')));
  const table = (t: MetricTable) => (notKept([t]).length ? [] : ['', ...renderTable(t, s, width)]);
  const unknownLine = (ts: MetricTable[]) => (ts.length ? ['', ...fit(`unknown for every variant: ${ts.map((t) => t.metric.title).join(', ')} (not kept in this result: stored before they were, or the release does not report them)`, width, '  ')] : []);
  for (const t of head) out.push(...table(t));
  out.push(...unknownLine(notKept(head)));
  const dist = renderDistribution(s, width);
  if (dist.length > 0) out.push('', ...dist);
  const modes = renderModes(s, width);
  if (modes.length > 0) out.push('', ...modes);
  const errors = renderErrors(s, width);
  if (errors.length > 0) out.push('', ...errors);
  const rest = s.tables.filter((t) => !s.headline.includes(t.metric.key));
  if (rest.length > 0) out.push('', 'other metrics');
  for (const t of rest) out.push(...table(t));
  out.push(...unknownLine(notKept(rest)));
  return out;
}

/** The report of one stored result (bench, bench show). Ends with a newline. */
export function renderReport(doc: BenchResult, opts: RenderOptions): string {
  const s = summarize(doc);
  const rows = doc.variants.map((variant) => ({ label: variant.name, variant }));
  return `${[...headerLines(doc, opts.width), ...body(s, rows, opts.width)].join('\n')}\n`;
}

/** What two results' loads differ in, each named with both values (issue 31: the note named no field). */
export function compareDifferences(a: BenchResult, b: BenchResult): string[] {
  const out: string[] = [];
  if (a.requests !== b.requests) out.push(`requests per run (A ${a.requests}, B ${b.requests})`);
  if (a.repeats !== b.repeats) out.push(`repeats (A ${a.repeats}, B ${b.repeats})`);
  if (a.concurrency.join(',') !== b.concurrency.join(',')) out.push(`concurrency (A ${a.concurrency.join(',')}, B ${b.concurrency.join(',')})`);
  if (a.seed !== b.seed) out.push(`seed (A ${a.seed}, B ${b.seed})`);
  if ((a.isolation ?? null) !== (b.isolation ?? null)) out.push(`cache isolation (A ${a.isolation ?? 'warm after the first run'}, B ${b.isolation ?? 'warm after the first run'})`);
  return out;
}

/** Two stored results side by side (bench compare): A's variants, then B's, ratios against the first measured. */
export function renderCompare(a: BenchResult, b: BenchResult, opts: RenderOptions): string {
  const s = summarizeCompare(a, b);
  const rows = [a, b].flatMap((doc, i) => doc.variants.map((variant) => ({ label: `${COMPARE_LETTERS[i]} ${variant.name}`, variant })));
  const head = [...headerLines(a, opts.width, COMPARE_LETTERS[0]), ...headerLines(b, opts.width, COMPARE_LETTERS[1])];
  const notes: string[] = [];
  if (machineLine(a) !== machineLine(b)) notes.push(...fit('note: the two results were measured on different machines or versions: compare ratios with care', opts.width, '  '));
  const differs = compareDifferences(a, b);
  if (differs.length > 0) notes.push(...fit(`note: the two results differ in ${differs.join('; ')}`, opts.width, '  '));
  return `${[...head, ...notes, ...body(s, rows, opts.width)].join('\n')}\n`;
}
