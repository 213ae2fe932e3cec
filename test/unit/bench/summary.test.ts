import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';
import type { BenchResult, BenchVariant } from '../../../src/bench/result.js';
import { median, summarize, summarizeCompare, type Cell } from '../../../src/bench/summary.js';

const fixture = (id: string): BenchResult => JSON.parse(readFileSync(join(FIXTURES, 'bench', 'state', 'bench', id, 'result.json'), 'utf8'));
const ROUTING = fixture('20261205-101500-000-routing');
const AGG = fixture('20261205-110200-000-agg-vs-disagg');
const INTERRUPTED = fixture('20261205-120000-000-agg-agg-router-mocker');

const metrics = (ttft: number, hit: number | null = 0.5) => ({ ttftP50Ms: ttft, ttftP90Ms: ttft * 2, itlP50Ms: 4, outputTokensPerSec: 100, requestsPerSec: 2, cacheHitShare: hit, requests: 10, errors: 0 });
const variant = (name: string, status: BenchVariant['status'], ttfts: number[], hit: number | null = 0.5, concurrency = 1): BenchVariant => ({
  ...ROUTING.variants[0], name, status, reason: status === 'measured' ? null : `${name} broke`,
  runs: ttfts.map((t, repeat) => ({ concurrency, repeat, export: `${name}/c${concurrency}-r${repeat}/profile_export_aiperf.json`, metrics: metrics(t, hit) })),
});
const doc = (variants: BenchVariant[], concurrency = [1]): BenchResult => ({ ...ROUTING, concurrency, variants });
const cell = (d: BenchResult, key: string, row: number, c = 0): Cell => summarize(d).tables.find((t) => t.metric.key === key)!.rows[row].cells[c];

describe('median', () => {
  it('is the middle of an odd count and the mean of the two middles of an even one, in any order', () => {
    expect(median([3])).toBe(3);
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([10, 20])).toBe(15);
    expect(() => median([])).toThrow();
  });

  it('sorts numbers as numbers: the median of [9, 10, 11] is 10, given in any order (issue 29: a string sort puts 10 and 11 before 9)', () => {
    for (const xs of [[9, 10, 11], [11, 9, 10], [10, 11, 9]]) expect(median(xs)).toBe(10);
    expect(median([100, 9, 20, 3])).toBe(14.5);
  });
});

describe('summarize', () => {
  it('gives median and min-max over the repeats and the ratio to the first measured variant', () => {
    const d = doc([variant('a', 'measured', [10, 30, 20]), variant('b', 'measured', [40, 20, 30, 50])]);
    expect(cell(d, 'ttftP50Ms', 0)).toEqual({ kind: 'value', median: 20, min: 10, max: 30, repeats: 3, ratio: 1 });
    expect(cell(d, 'ttftP50Ms', 1)).toEqual({ kind: 'value', median: 35, min: 20, max: 50, repeats: 4, ratio: 1.75 });
  });

  it('an invalid first variant has no number, and the ratios are to the first measured one', () => {
    const d = doc([variant('off', 'invalid', []), variant('kv', 'measured', [10]), variant('rr', 'measured', [25])]);
    const s = summarize(d);
    expect(s.baseline).toBe('kv');
    const ttft = s.tables[0].rows;
    expect(ttft[0]).toEqual({ label: 'off', status: 'invalid', reason: 'off broke', control: null, cells: [] });
    expect(ttft[2].cells[0]).toMatchObject({ median: 25, ratio: 2.5 });
  });

  it('even an invalid variant that somehow kept runs shows no number', () => {
    const d = doc([variant('kv', 'measured', [10]), variant('bad', 'invalid', [1, 2, 3])]);
    expect(summarize(d).tables[0].rows[1].cells).toEqual([]);
  });

  it('cache hits the release did not report are unknown, never 0, and have no ratio', () => {
    const d = doc([variant('a', 'measured', [10, 11], null), variant('b', 'measured', [12], 0.4)]);
    expect(cell(d, 'cacheHitShare', 0)).toEqual({ kind: 'unknown', repeats: 2 });
    // b has a number, but its base is unknown: no ratio rather than a made-up one.
    expect(cell(d, 'cacheHitShare', 1)).toEqual({ kind: 'value', median: 0.4, min: 0.4, max: 0.4, repeats: 1, ratio: null });
    // One repeat without it makes the median a guess: unknown.
    const mixed = variant('m', 'measured', [10, 10], 0.5);
    mixed.runs[1].metrics.cacheHitShare = null;
    expect(cell(doc([mixed]), 'cacheHitShare', 0)).toEqual({ kind: 'unknown', repeats: 2 });
  });

  it('a concurrency a variant has no run at is "none", and the ratio is per concurrency', () => {
    const a = variant('a', 'measured', [10]);
    a.runs.push({ ...a.runs[0], concurrency: 4, metrics: metrics(40) });
    const b = variant('b', 'measured', [20]);
    const s = summarize(doc([a, b], [4, 1]));
    expect(s.concurrency).toEqual([1, 4]);
    expect(s.tables[0].rows[1].cells).toEqual([{ kind: 'value', median: 20, min: 20, max: 20, repeats: 1, ratio: 2 }, { kind: 'none' }]);
  });

  it('no measured variant: no baseline, statuses counted, missing named', () => {
    const s = summarize(INTERRUPTED);
    expect(s.baseline).toBe('agg-router');
    expect(s.missing).toEqual(['mocker']);
    expect(s.counts).toEqual({ measured: 1, invalid: 0, failed: 1, missing: 1 });
    const none = summarize(doc([variant('x', 'failed', [])]));
    expect(none.baseline).toBeNull();
  });

  it('the routing fixture: kv-events is the base, round-robin slower, kv-events-off INVALID', () => {
    const s = summarize(ROUTING);
    expect(s.baseline).toBe('kv-events');
    const rr = s.tables[0].rows.find((r) => r.label === 'round-robin')!.cells[0];
    expect(rr.kind === 'value' && rr.ratio! > 2).toBe(true);
    expect(s.tables[0].rows.find((r) => r.label === 'kv-events-off')!.status).toBe('invalid');
  });
});

describe('summarizeCompare', () => {
  it('lists A\'s variants then B\'s, over both results\' concurrencies, ratios to A\'s first measured', () => {
    const s = summarizeCompare(ROUTING, AGG);
    expect(s.tables[0].rows.map((r) => r.label)).toEqual(['A kv-events', 'A kv-approx', 'A round-robin', 'A random', 'A kv-events-off', 'B agg', 'B disagg-same-gpu']);
    expect(s.concurrency).toEqual([1, 4]);
    expect(s.baseline).toBe('A kv-events');
    expect(s.tables[0].rows[0].cells[1]).toEqual({ kind: 'none' });
    // B's concurrency 4 has numbers but A's base has none there: no ratio.
    expect(s.tables[0].rows[5].cells[1]).toMatchObject({ kind: 'value', ratio: null });
  });
});
