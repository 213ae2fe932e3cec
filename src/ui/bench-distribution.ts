import type { Summary } from '../bench/summary.js';
import { formatMetric } from './bench-metric.js';
import { visibleLength, wrapWords } from './fit.js';

// Pure: the distribution view of a summary (issue 31): every completed request's TTFT per variant
// and concurrency as a strip on one shared axis, and the hit/miss split beside it. A two-valued
// TTFT (cache hits fast, misses slow) shows as two clumps; their sizes are the routing effect.
// ASCII density characters, so a pipe and a terminal read the same.

const LEVELS = ' .:-=+*%@';

/** A strip of `bins` characters: each the density of the values in its slice of [lo, hi]. */
export function strip(xs: readonly number[], lo: number, hi: number, bins: number): string {
  const counts = new Array<number>(bins).fill(0);
  for (const x of xs) {
    const i = hi > lo ? Math.min(bins - 1, Math.max(0, Math.floor(((x - lo) / (hi - lo)) * bins))) : 0;
    counts[i] += 1;
  }
  const max = Math.max(1, ...counts);
  return counts.map((c) => (c === 0 ? ' ' : LEVELS[Math.max(1, Math.round((c / max) * (LEVELS.length - 1)))])).join('');
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function renderDistribution(s: Summary, width: number | null): string[] {
  const cells = [...s.samples].flatMap(([label, byConc]) => byConc.flatMap((c, i) => (c && c.ttftMs.length > 0 ? [{ label, concurrency: s.concurrency[i], ...c }] : [])));
  if (cells.length === 0) return [];
  const all = cells.flatMap((c) => c.ttftMs);
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  const names = cells.map((c) => `${c.label}  c${c.concurrency}`);
  const lw = Math.max(...names.map(visibleLength));
  const splits = cells.map((c) => {
    if (!c.hits) return `${c.ttftMs.length} requests, mean ${formatMetric(mean(c.ttftMs), false)} ms`;
    const hit = c.ttftMs.filter((_, i) => c.hits![i]);
    const miss = c.ttftMs.filter((_, i) => !c.hits![i]);
    const part = (n: number, word: string, xs: number[]) => `${n} ${word}${xs.length ? ` ${formatMetric(mean(xs), false)} ms` : ''}`;
    return `${part(hit.length, hit.length === 1 ? 'hit' : 'hits', hit)}, ${part(miss.length, miss.length === 1 ? 'miss' : 'misses', miss)}`;
  });
  // Piped: 40 bins; on a terminal what fits beside the label and the split (at least 20).
  const sw = Math.max(...splits.map(visibleLength));
  const bins = width === null ? 40 : Math.max(20, Math.min(60, width - lw - sw - 6));
  const out = (width === null ? [] : []) as string[];
  const title = `TTFT of every request (ms, ${formatMetric(lo, false)} to ${formatMetric(hi, false)}; denser ${LEVELS.slice(1)}), with the cache hits and misses (mean TTFT of each)`;
  out.push(...(width === null ? [title] : wrapWords(title, width, '  ')));
  const axisLo = formatMetric(lo, false);
  const axisHi = formatMetric(hi, false);
  out.push(`${' '.repeat(lw)}  ${axisLo}${' '.repeat(Math.max(1, bins + 2 - axisLo.length - axisHi.length))}${axisHi}`);
  cells.forEach((c, i) => {
    const line = `${names[i]}${' '.repeat(lw - visibleLength(names[i]))}  |${strip(c.ttftMs, lo, hi, bins)}|  ${splits[i]}`;
    out.push(...(width === null || visibleLength(line) <= width ? [line] : wrapWords(line, width, ' '.repeat(Math.min(lw + 4, Math.floor(width / 2))))));
  });
  return out;
}
