import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';
import type { BenchResult } from '../../../src/bench/result.js';
import { renderComparison, renderResult } from '../../../src/ui/bench-render.js';
import { summarize } from '../../../src/bench/summary.js';
import { niceTicks, renderSvg, tickLabel } from '../../../src/ui/bench-plot-svg.js';
import { bar, renderTextPlot, utf8Terminal } from '../../../src/ui/bench-plot-text.js';
import { formatMetric, formatUtc } from '../../../src/ui/bench-report.js';
import { listedResult, renderBenchList } from '../../../src/ui/bench-list.js';

// Golden renders of the stored fixtures (test/fixtures/bench/golden). After a deliberate change:
//   UPDATE_GOLDEN=1 npx vitest run test/unit/bench/render.test.ts   and read the diff.
const GOLDEN = join(FIXTURES, 'bench', 'golden');
const fixture = (id: string): BenchResult => JSON.parse(readFileSync(join(FIXTURES, 'bench', 'state', 'bench', id, 'result.json'), 'utf8'));
const ROUTING = fixture('20261205-101500-000-routing');
const AGG = fixture('20261205-110200-000-agg-vs-disagg');
const INTERRUPTED = fixture('20261205-120000-000-agg-agg-router-mocker');

function golden(name: string, text: string): void {
  const path = join(GOLDEN, name);
  if (process.env.UPDATE_GOLDEN === '1' || !existsSync(path)) writeFileSync(path, text);
  expect(text).toBe(readFileSync(path, 'utf8'));
}

const PIPED = { width: null, utf8: true };
const TERM80 = { width: 80, utf8: true };

describe('the report of a stored result', () => {
  it('golden: show piped and at 80 columns, compare piped and at 80 columns', () => {
    golden('routing.piped.txt', renderResult(ROUTING, PIPED).text);
    golden('routing.80.txt', renderResult(ROUTING, TERM80).text);
    golden('agg-vs-disagg.piped.txt', renderResult(AGG, PIPED).text);
    golden('interrupted.piped.txt', renderResult(INTERRUPTED, PIPED).text);
    golden('compare.piped.txt', renderComparison(ROUTING, AGG, PIPED).text);
    golden('compare.80.txt', renderComparison(AGG, INTERRUPTED, TERM80).text);
  });

  it('the same document gives the same bytes (no clock, no host)', () => {
    const again = JSON.parse(JSON.stringify(ROUTING));
    expect(renderResult(again, TERM80).text).toBe(renderResult(ROUTING, TERM80).text);
    expect(renderResult(again, PIPED).svg()).toBe(renderResult(ROUTING, PIPED).svg());
  });

  it('at 80 columns no line is wider than 80; piped, a long reason stays on one line', () => {
    for (const text of [renderResult(ROUTING, TERM80).text, renderComparison(AGG, INTERRUPTED, TERM80).text]) {
      for (const line of text.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    }
    const piped = renderResult(ROUTING, PIPED).text;
    expect(piped).toContain('\n  kv-events-off: INVALID: kv.events: the router expects KV events but 2 workers logged kv_event_publisher_disabled\n');
    expect(piped).not.toMatch(/[█#]/); // no terminal plot in a pipe
  });

  it('a narrow terminal splits the concurrency columns into blocks under the same variant column', () => {
    const text = renderResult(AGG, { width: 50, utf8: true }).text;
    const ttft = text.slice(text.indexOf('TTFT p50'), text.indexOf('TTFT p90'));
    expect(ttft.match(/^variant\s+concurrency \d$/gm)).toEqual(['variant           concurrency 1', 'variant           concurrency 4']);
    // At 80 both fit beside each other.
    expect(renderResult(AGG, TERM80).text).toMatch(/^variant\s+concurrency 1\s+concurrency 4$/m);
  });

  it('an invalid, failed or missing variant is a status and a reason (said once, under the counts), never a number', () => {
    const text = renderResult(INTERRUPTED, PIPED).text;
    const tables = text.slice(text.indexOf('TTFT p50'), text.indexOf('validity gates'));
    for (const line of tables.split('\n').filter((l) => /^(agg|mocker) /.test(l))) expect(line).toMatch(/^(agg|mocker) +(FAILED|MISSING)$/);
    expect(text).toContain('variants: 1 measured, 1 failed, 1 missing\n  agg: FAILED: up: agg-0 exited with code 1 before it was ready (CUDA out of memory)\n  mocker: MISSING: interrupted (Ctrl-C) during up\n\n');
    expect(text.split('up: agg-0 exited').length - 1).toBe(2); // under the counts and in the gates, not in every table
    expect(text).toMatch(/^agg {10}FAILED$/m);
    expect(text).toMatch(/^mocker {7}MISSING$/m);
    expect(text).toContain('missing (the bench was interrupted before them): mocker');
    expect(text).toContain('started 2026-12-05 12:00:00 UTC, took 7m13s, INTERRUPTED');
  });

  it('nothing measured (every variant failed at its preflight): the reasons and the gates, no table or plot of FAILED cells', () => {
    const doc: BenchResult = JSON.parse(JSON.stringify(INTERRUPTED));
    for (const v of doc.variants) Object.assign(v, { status: 'failed', reason: 'preflight: ports.free failed; nothing was started', runs: [] });
    for (const t of [PIPED, TERM80]) {
      const text = renderResult(doc, t).text;
      expect(text).toContain('no variant was measured: no numbers to show\n\nvalidity gates');
      expect(text).not.toMatch(/^\S+ +FAILED$/m);
      expect(text).not.toContain('TTFT');
      expect(text).not.toMatch(/[█#]/);
      expect(text).toContain('variants: 3 failed\n  agg: FAILED: preflight: ports.free failed; nothing was started\n');
    }
  });

  it('unknown cache hits read "unknown", not 0%', () => {
    const text = renderResult(AGG, PIPED).text;
    // Unknown for every variant: one line naming it, not a table of 'unknown' (and never 0%).
    expect(text).toContain('\nunknown for every variant: TTFT mean of cache hits, TTFT mean of cache misses, cache-hit share (not kept in this result: ');
    expect(text).not.toMatch(/^cache-hit share \(/m);
    expect(text).not.toMatch(/^agg .*%.*x/m);
    // Unknown for some: the table, the unknown ones saying so.
    const some: BenchResult = JSON.parse(JSON.stringify(AGG));
    for (const r of some.variants[1].runs) r.metrics.cacheHitShare = 0.25;
    const hits = renderResult(some, PIPED).text.split('\n\n').find((b) => b.startsWith('cache-hit share'))!;
    expect(hits).toMatch(/^agg\s+unknown\s+unknown$/m);
    expect(hits).toMatch(/^disagg-same-gpu\s+25\.0%/m);
  });

  it('the gates: each failing one with its summary, the passing ones named', () => {
    const text = renderResult(ROUTING, PIPED).text;
    expect(text).toContain('kv-events-off  ✗ kv.events: 2 of 2 workers logged kv_event_publisher_disabled; no KV event seen');
    expect(text).toContain('kv-events      ✓ all 5 pass (workers.counted, kv.events, no.deaths, no.download.lock, same.model)');
  });
});

describe('numbers', () => {
  it('three significant-ish digits, shares as percentages, UTC dates', () => {
    expect([formatMetric(212.4, false), formatMetric(38.44, false), formatMetric(4.123, false), formatMetric(0.731, true)]).toEqual(['212', '38.4', '4.12', '73.1%']);
    expect(formatUtc('2026-12-05T10:15:00.000Z')).toBe('2026-12-05 10:15:00 UTC');
    expect(formatUtc('yesterday')).toBe('yesterday');
  });
});

describe('the terminal plot', () => {
  it('bars in eighth blocks, or # where the terminal cannot show them', () => {
    expect(bar(3.5, false)).toBe('███▌');
    expect(bar(2.99, false)).toBe('███');
    expect(bar(0, false)).toBe('');
    expect(bar(3.5, true)).toBe('####');
    expect(utf8Terminal({ LANG: 'en_US.UTF-8' })).toBe(true);
    expect(utf8Terminal({ LANG: 'C' })).toBe(false);
    expect(utf8Terminal({ LC_ALL: 'C', LANG: 'en_US.UTF-8' })).toBe(false);
  });

  it('the headline metrics per variant and concurrency, the longest bar filling the width, never past it', () => {
    // The fixture with means (kept since issue 31): the percentiles' values stand in.
    const withMeans: BenchResult = JSON.parse(JSON.stringify(AGG));
    for (const v of withMeans.variants) for (const r of v.runs) Object.assign(r.metrics, { ttftMeanMs: r.metrics.ttftP50Ms, itlMeanMs: r.metrics.itlP50Ms });
    for (const width of [40, 80, 120]) {
      const text = renderTextPlot(summarize(withMeans), { width, ascii: false });
      for (const line of text.split('\n')) expect([...line].length, `${width}: ${line}`).toBeLessThanOrEqual(width);
      expect(text.split('\n').some((l) => [...l].length === width)).toBe(true);
    }
    // agg-vs-disagg: TTFT and ITL (means; stored before they were kept: unknown, never a number).
    expect(renderTextPlot(summarize(AGG), { width: 80, ascii: true })).toMatch(/^TTFT mean \(ms; lower is better\)\n {2}concurrency 1\n {2}agg +unknown$/m);
    const text = renderTextPlot(summarize(ROUTING), { width: 80, ascii: true });
    expect(text).toMatch(/^cache-hit share \(%; higher is better\)$/m);
    // The means were not kept then: only the metrics with numbers are drawn.
    expect(text).not.toMatch(/^TTFT (mean|p50)/m);
    expect(text).toMatch(/^ {2}kv-events-off {2}INVALID$/m);
  });
});

describe('the picture', () => {
  it('names every variant in its legend (the ones without numbers with their status) and has axis labels', () => {
    const svg = renderResult(ROUTING, PIPED).svg();
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    for (const v of ROUTING.variants) expect(svg).toContain(`>${v.name}${v.status === 'measured' ? ', 0 failed of ' : ` (${v.status.toUpperCase()}: no numbers)</text>`}`);
    expect(svg).toContain('cache-hit share (%)</text>');
    expect(svg).not.toContain('TTFT mean (ms)</text>');
    expect(svg).toContain('>concurrency 1</text>');
    // 4 measured variants x 1 concurrency with a hit share; the means were not kept then: not drawn.
    expect(svg.match(/<\/title><\/rect>/g)).toHaveLength(4);
    const cmp = renderComparison(AGG, INTERRUPTED, PIPED).svg();
    for (const l of ['A agg, 0 failed of ', 'A disagg-same-gpu, 0 failed of ', 'B agg (FAILED: no numbers)<', 'B agg-router, 0 failed of ', 'B mocker (MISSING: no numbers)<']) expect(cmp).toContain(`>${l}`);
  });

  it('escapes what a variant name could hold', () => {
    const odd = { ...ROUTING, variants: [{ ...ROUTING.variants[0], name: 'a<b>&"c"' }] };
    expect(renderResult(odd, PIPED).svg()).toContain('a&lt;b&gt;&amp;&quot;c&quot;');
  });

  it('ticks at 1, 2 or 5 x 10^k from 0 past the largest value, labelled with the digits their step needs', () => {
    expect(niceTicks(88)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(599)).toEqual([0, 200, 400, 600]);
    expect(niceTicks(4.2)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(tickLabel(0.5, 0.5, false)).toBe('0.5');
    expect(tickLabel(40, 20, false)).toBe('40');
    expect(tickLabel(0.4, 0.2, true)).toBe('40%');
  });
});

describe('bench list', () => {
  it('id, when, what and the variants by status; an unreadable one with why', () => {
    const items = [
      listedResult({ id: 'x', result: null, problem: 'no result.json' }),
      listedResult({ id: INTERRUPTED.id, result: INTERRUPTED, problem: null }),
      listedResult({ id: ROUTING.id, result: ROUTING, problem: null }),
    ];
    golden('list.piped.txt', renderBenchList(items, null));
    expect(renderBenchList([], null)).toBe('no bench results yet: dynamo-dev bench --preset routing runs one\n');
  });
});

describe('the machine line', () => {
  it('a mocker run says vLLM is not used; a vLLM run gives its version or unknown; results stored before the engine was kept stay as they were', async () => {
    const { machineLine } = await import('../../../src/ui/bench-report.js');
    const at = (machine: Partial<BenchResult['machine']>) => machineLine({ ...ROUTING, machine: { ...ROUTING.machine, ...machine } });
    expect(at({ engine: 'mocker', vllm: null })).toContain(' · vLLM not used (mocker engine) · ');
    expect(at({ engine: 'vllm', vllm: '0.31.0' })).toContain(' · vLLM 0.31.0 · ');
    expect(at({ engine: 'mixed', vllm: null })).toContain(' · vLLM unknown · ');
    expect(at({ engine: undefined, vllm: null })).toContain(' · vLLM unknown · ');
  });
});
