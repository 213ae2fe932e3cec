import type { BenchResult } from './result.js';
import { summarize, summarizeCompare, type Summary } from './summary.js';
import { renderSvg } from './plot-svg.js';
import { machineLine, renderCompare, renderReport } from '../ui/bench-report.js';
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
  (t.width === null ? text : `${text}\n${renderTextPlot(s, { width: t.width, ascii: !t.utf8 })}`);

const loadLine = (doc: BenchResult) => `${doc.requests} requests per run, ${doc.repeats} repeats, concurrency ${doc.concurrency.join(', ')}, seed ${doc.seed}`;

/** One stored result: the report (with the terminal plot on a terminal) and its picture. */
export function renderResult(doc: BenchResult, t: Terminal): Rendered {
  const s = summarize(doc);
  return {
    text: withPlot(renderReport(doc, { width: t.width }), s, t),
    svg: () => renderSvg(s, { title: `dynamo-dev bench ${doc.id}${doc.preset ? ` (preset ${doc.preset})` : ''}`, subtitle: [machineLine(doc), loadLine(doc)] }),
  };
}

/** Two stored results side by side. */
export function renderComparison(a: BenchResult, b: BenchResult, t: Terminal): Rendered {
  const s = summarizeCompare(a, b);
  return {
    text: withPlot(renderCompare(a, b, { width: t.width }), s, t),
    svg: () => renderSvg(s, { title: `dynamo-dev bench compare: A ${a.id}, B ${b.id}`, subtitle: [`A: ${machineLine(a)}`, `B: ${machineLine(b)}`, `A: ${loadLine(a)}; B: ${loadLine(b)}`] }),
  };
}
