import type { BenchResult } from '../bench/result.js';
import { summarize, summarizeCompare, type Summary } from '../bench/summary.js';
import { renderSvg } from './bench-plot-svg.js';
import { isolationLine, loadText, machineLine, renderCompare, renderReport } from '../ui/bench-report.js';
import { renderTextPlot } from '../ui/bench-plot-text.js';

// Pure: everything `bench`, `bench show` and `bench compare` print or draw for stored results, in
// one place: the text (tables, gates), the terminal plot and the SVG. No clock, no host.

export interface Terminal {
  /** Columns of the terminal; null when piped (whole lines, no terminal plot). */
  width: number | null;
  /** Block characters are shown (a UTF-8 terminal); else '#'. */
  utf8: boolean;
}

export interface Rendered {
  text: string;
  svg: () => string;
}

const withPlot = (text: string, s: Summary, t: Terminal) =>
  (t.width === null || s.baseline === null ? text : `${text}\n${renderTextPlot(s, { width: t.width, ascii: !t.utf8 })}`);


/** What a result compared, for a plot's title: 'routing: kv-events vs round-robin vs random (control: kv-events-off)'. */
export function comparedTitle(doc: BenchResult): string {
  const controls = doc.variants.filter((v) => v.control).map((v) => v.name);
  const compared = doc.variants.filter((v) => !v.control).map((v) => v.name);
  const what = doc.preset ?? [...new Set(doc.variants.map((v) => v.recipe))].join(', ');
  return `${what}: ${compared.join(' vs ') || 'no variants'}${controls.length ? ` (control: ${controls.join(', ')})` : ''}`;
}

/** One stored result: the report (with the terminal plot on a terminal) and its picture. */
export function renderResult(doc: BenchResult, t: Terminal): Rendered {
  const s = summarize(doc);
  return {
    text: withPlot(renderReport(doc, { width: t.width }), s, t),
    svg: () => renderSvg(s, { title: comparedTitle(doc), subtitle: [`dynamo-dev bench ${doc.id}`, machineLine(doc, true), loadText(doc), isolationLine(doc)] }),
  };
}

/** Two stored results side by side. */
export function renderComparison(a: BenchResult, b: BenchResult, t: Terminal): Rendered {
  const s = summarizeCompare(a, b);
  return {
    text: withPlot(renderCompare(a, b, { width: t.width }), s, t),
    svg: () => renderSvg(s, { title: `A ${comparedTitle(a)} / B ${comparedTitle(b)}`, subtitle: [`dynamo-dev bench compare: A ${a.id}, B ${b.id} (B's bars lighter)`, `A: ${machineLine(a, true)}`, `B: ${machineLine(b, true)}`, `A: ${loadText(a)}; B: ${loadText(b)}`] }),
  };
}
