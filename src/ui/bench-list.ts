import type { BenchListing } from '../run/bench-store.js';
import type { BenchResult } from '../bench/result.js';
import { formatUtc } from './bench-report.js';
import { controlOutcome } from '../bench/controls.js';
import { visibleLength, wrapWords } from './fit.js';

// Pure: `bench list`, one line per stored result, newest first: id, when, what was benched and
// its variants by status. A result that cannot be read is listed with why.

export interface ListedResult {
  id: string;
  startedAt: string | null;
  preset: string | null;
  recipes: string[];
  interrupted: boolean;
  variants: { measured: number; invalid: number; failed: number; missing: number };
  /** Of the invalid: a preset's controls invalid as expected (issue 31). */
  controls: number;
  problem: string | null;
}

export function listedResult(l: BenchListing): ListedResult {
  const empty = { measured: 0, invalid: 0, failed: 0, missing: 0 };
  if (l.result === null) return { id: l.id, startedAt: null, preset: null, recipes: [], interrupted: false, variants: empty, controls: 0, problem: l.problem };
  const doc: BenchResult = l.result;
  const variants = { ...empty };
  for (const v of doc.variants) variants[v.status] += 1;
  const controls = doc.variants.filter((v) => controlOutcome(v)?.kind === 'as-expected').length;
  return { id: l.id, startedAt: doc.startedAt, preset: doc.preset, recipes: [...new Set(doc.variants.map((v) => v.recipe))], interrupted: doc.interrupted, variants, controls, problem: null };
}

export function renderBenchList(items: readonly ListedResult[], width: number | null): string {
  if (items.length === 0) return 'no bench results yet: dynamo-dev bench --preset routing runs one\n';
  const rows = items.map((r): [string, string, string, string] => {
    if (r.problem !== null) return [r.id, '', '', `unreadable: ${r.problem}`];
    const n = { ...r.variants, invalid: r.variants.invalid - r.controls };
    const counts = (['measured', 'invalid', 'failed', 'missing'] as const).filter((k) => n[k] > 0).map((k) => `${n[k]} ${k}`);
    if (r.controls > 0) counts.push(`${r.controls} control`);
    // Minutes in UTC and the preset's bare name: a row fits 80 columns (issue 31: 91 piped).
    return [r.id, formatUtc(r.startedAt!).slice(0, 16), r.preset ?? r.recipes.join(', '), `${counts.join(', ') || 'no variants'}${r.interrupted ? ' (interrupted)' : ''}`];
  });
  const head: [string, string, string, string] = ['id', 'started (UTC)', 'what', 'variants'];
  const w = [0, 1, 2].map((i) => Math.max(visibleLength(head[i]), ...rows.map((r) => visibleLength(r[i]))));
  const pad = (t: string, n: number) => t + ' '.repeat(n - visibleLength(t));
  const indent = ' '.repeat(w[0] + w[1] + w[2] + 6);
  const lines = [head, ...rows].flatMap((r) => {
    const line = `${pad(r[0], w[0])}  ${pad(r[1], w[1])}  ${pad(r[2], w[2])}  ${r[3]}`.trimEnd();
    return width === null || visibleLength(line) <= width ? [line] : wrapWords(line, width, indent.length < width / 2 ? indent : '  ');
  });
  return `${lines.join('\n')}\n`;
}
