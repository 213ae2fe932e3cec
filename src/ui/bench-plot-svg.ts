import { ERROR_FLAG_RATE, METRICS, type Summary } from '../bench/summary.js';
import { formatMetric } from '../ui/bench-report.js';
import { plottedOf } from '../ui/bench-plot-text.js';
import { wrapWords } from '../ui/fit.js';

// Pure: the picture of a summary for a report (`--plot FILE.svg`; the PNG is this SVG rasterised):
// one panel per headline metric of the preset (routing: cache-hit share, TTFT mean, TTFT of hits
// and of misses), bars grouped by concurrency, one colour per variant (the same variant the same
// colour in a compare: B's bars lighter) with its min-max over the repeats as a whisker, failed
// requests under each bar that had any, axis labels and a legend naming every variant with its
// errors, the ones without numbers with their status. Same summary, same bytes.

// Okabe & Ito's colour-blind-safe palette (Color Universal Design, 2002), black left out.
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#999999'];

// Characters XML 1.0 forbids (C0 controls but tab/newline/CR, U+FFFE/FFFF, lone surrogates) go first: resvg refuses the file otherwise.
const esc = (s: string) => s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const n = (x: number) => (Math.round(x * 10) / 10).toString();

/** Axis ticks from 0 to past `max`: steps of 1, 2 or 5 x 10^k, about five of them. */
export function niceTicks(max: number): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw);
  // A denormal such as 5e-324 makes max / 5 zero and the step zero: the loop never ended (1.9 GB, V8 fatal).
  if (step === undefined || !(step > 0) || !Number.isFinite(step) || max / step > 20) return [0, max];
  const ticks: number[] = [];
  for (let t = 0; t < max + step * 0.999 && ticks.length <= 20; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/** A tick as few digits as its step needs: 0, 20, 40; 0.5, 1.0; 20%, 40%. */
export function tickLabel(t: number, step: number, percent: boolean): string {
  const k = percent ? 100 : 1;
  const decimals = Math.max(0, -Math.floor(Math.log10(step * k) + 1e-9));
  // Past six decimals (a stored metric of 1e-9, 5e-324) a fixed label is unreadable, and toFixed refuses more than 100.
  if (!Number.isFinite(decimals) || decimals > 6) return `${t === 0 ? '0' : (t * k).toExponential(1)}${percent ? '%' : ''}`;
  return `${(t * k).toFixed(decimals)}${percent ? '%' : ''}`;
}

export interface SvgOptions {
  title: string;
  /** Lines under the title (machine, load): from the stored document, never the host. */
  subtitle: string[];
}

export function renderSvg(s: Summary, opts: SvgOptions): string {
  const W = 960;
  const left = 80;
  const right = 24;
  const plotW = W - left - right;
  const panelH = plottedOf(s).length > 2 ? 220 : 300;
  const labels = s.tables[0].rows.map((r) => r.label);
  const measured = s.tables[0].rows.filter((r) => r.status === 'measured').map((r) => r.label);
  // A compare's labels are 'A name' / 'B name': the colour is the name's, B's bars lighter.
  const nameOf = (l: string) => l.replace(/^[AB] /, '');
  const names = [...new Set(measured.map(nameOf))];
  const colour = new Map(measured.map((l) => [l, PALETTE[names.indexOf(nameOf(l)) % PALETTE.length]]));
  const opacity = (l: string) => (l.startsWith('B ') && measured.some((x) => x.startsWith('A ')) ? ' fill-opacity="0.55"' : '');
  const failed = (l: string) => {
    const cells = (s.errors.get(l) ?? []).filter((e) => e !== null);
    const f = cells.reduce((n, e) => n + e!.failed, 0);
    const sent = cells.reduce((n, e) => n + e!.sent, 0);
    return { f, sent, flagged: sent > 0 && f / sent > ERROR_FLAG_RATE };
  };
  const out: string[] = [];
  let y = 32;
  // Long titles and machine lines wrap at word boundaries to stay inside the picture (~7 px a
  // character at 13 px, ~11 at 20 px bold).
  wrapWords(opts.title, 72, '  ').forEach((line, i) => {
    if (i > 0) y += 26;
    out.push(`<text x="${left}" y="${y}" font-size="20" font-weight="bold">${esc(line)}</text>`);
  });
  for (const line of opts.subtitle.flatMap((l) => wrapWords(l, 112, '    '))) {
    y += 20;
    out.push(`<text x="${left}" y="${y}" font-size="13" fill="#444">${esc(line)}</text>`);
  }
  // Legend: every variant, a swatch for the measured, a grey hatched one and the status for the others.
  y += 16;
  const perRow = 3;
  const colW = plotW / perRow;
  labels.forEach((label, i) => {
    const row = s.tables[0].rows[i];
    const lx = left + (i % perRow) * colW;
    const ly = y + Math.floor(i / perRow) * 22;
    const fill = colour.get(label) ?? 'url(#hatch)';
    out.push(`<rect x="${lx}" y="${ly}" width="14" height="14" fill="${fill}"${opacity(label)} stroke="#333" stroke-width="0.5"/>`);
    const e = failed(label);
    const errs = e.sent > 0 ? `, ${e.f} failed of ${e.sent}${e.flagged ? ' !' : ''}` : '';
    const text = row.status === 'measured' ? `${label}${errs}` : `${label} (${row.control?.kind === 'as-expected' ? 'control: INVALID as expected' : `${row.status.toUpperCase()}: no numbers`})`;
    out.push(`<text x="${lx + 20}" y="${ly + 12}" font-size="13"${e.flagged ? ' fill="#B00020"' : ''}>${esc(text)}</text>`);
  });
  y += Math.ceil(labels.length / perRow) * 22 + 16;

  for (const key of plottedOf(s)) {
    const m = METRICS.find((x) => x.key === key)!;
    const table = s.tables.find((t) => t.metric.key === key)!;
    const top = y + 28;
    const bottom = top + panelH;
    const values = table.rows.flatMap((r) => r.cells.flatMap((c) => (c.kind === 'value' ? [c.max] : [])));
    // Room above the tallest whisker for its value label (11 px text 5 px above it): at 79.9% the
    // axis ended at 80% and the label ran into the panel's title.
    const ticks = niceTicks(Math.max(0, ...values) * (1 + 20 / panelH));
    const yMax = ticks[ticks.length - 1];
    const yOf = (v: number) => bottom - (v / yMax) * panelH;
    out.push(`<text x="${left}" y="${y + 16}" font-size="15" font-weight="bold">${esc(`${m.title} (${m.unit}), ${m.better} is better; median of the repeats, whisker min-max`)}</text>`);
    for (const t of ticks) {
      out.push(`<line x1="${left}" x2="${left + plotW}" y1="${n(yOf(t))}" y2="${n(yOf(t))}" stroke="#ddd"/>`);
      out.push(`<text x="${left - 8}" y="${n(yOf(t) + 4)}" font-size="12" text-anchor="end">${esc(tickLabel(t, ticks[1], m.percent))}</text>`);
    }
    out.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${bottom}" stroke="#333"/>`);
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${bottom}" y2="${bottom}" stroke="#333"/>`);
    out.push(`<text transform="translate(${left - 56},${n((top + bottom) / 2)}) rotate(-90)" font-size="13" text-anchor="middle">${esc(`${m.title} (${m.unit})`)}</text>`);
    const groupW = plotW / s.concurrency.length;
    const barW = Math.min(48, (groupW * 0.8) / Math.max(1, measured.length));
    s.concurrency.forEach((c, ci) => {
      const gx = left + ci * groupW + (groupW - barW * measured.length) / 2;
      measured.forEach((label, bi) => {
        const r = table.rows.find((x) => x.label === label)!;
        const cell = r.cells[ci];
        const x = gx + bi * barW;
        if (cell.kind !== 'value') {
          out.push(`<text x="${n(x + barW / 2)}" y="${bottom - 6}" font-size="11" text-anchor="middle" fill="#666">${cell.kind === 'unknown' ? '?' : '-'}</text>`);
          return;
        }
        const err = s.errors.get(label)?.[ci];
        if (err && err.failed > 0) {
          out.push(`<text x="${n(x + barW / 2)}" y="${bottom + 34}" font-size="10" text-anchor="middle" fill="#B00020">${esc(`${err.failed} err`)}</text>`);
        }
        out.push(`<rect x="${n(x + 2)}" y="${n(yOf(cell.median))}" width="${n(barW - 4)}" height="${n(bottom - yOf(cell.median))}" fill="${colour.get(label)}"${opacity(label)}><title>${esc(`${label}, concurrency ${c}: ${formatMetric(cell.median, m.percent)} ${m.unit}`)}</title></rect>`);
        if (cell.max > cell.min) {
          const cx = n(x + barW / 2);
          out.push(`<path d="M${cx} ${n(yOf(cell.max))}V${n(yOf(cell.min))}M${n(x + barW / 2 - 5)} ${n(yOf(cell.max))}h10M${n(x + barW / 2 - 5)} ${n(yOf(cell.min))}h10" stroke="#222" stroke-width="1.2" fill="none"/>`);
        }
        out.push(`<text x="${n(x + barW / 2)}" y="${n(yOf(cell.max) - 5)}" font-size="11" text-anchor="middle">${esc(formatMetric(cell.median, m.percent))}</text>`);
      });
      out.push(`<text x="${n(left + ci * groupW + groupW / 2)}" y="${bottom + 20}" font-size="13" text-anchor="middle">${esc(`concurrency ${c}`)}</text>`);
    });
    y = bottom + 50;
  }
  const H = Math.ceil(y);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="2"/></pattern></defs>',
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    ...out,
    '</svg>',
    '',
  ].join('\n');
}
