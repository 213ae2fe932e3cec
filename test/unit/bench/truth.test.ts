import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorText, metricsFromExport } from '../../../src/host/python/aiperf-export.js';
import { hitFlags, samplesFromRecords } from '../../../src/host/python/aiperf-records.js';
import { controlOutcome, variantFails } from '../../../src/bench/controls.js';
import { headlineOf, summarize, twoModes } from '../../../src/bench/summary.js';
import { loadSeed } from '../../../src/run/bench.js';
import { renderResult } from '../../../src/ui/bench-render.js';
import type { BenchResult, BenchVariant } from '../../../src/bench/result.js';
import { FIXTURES } from '../../helpers/cli.js';

// Issue 31: the routing experiment read false (percentiles of a two-valued TTFT, a warm cache at the
// second concurrency, failed requests never shown, its control counted as a failure). Real AIPerf
// 0.13.0 output against Dynamo 1.6.1's mocker (the routing preset, 24 requests, 2026-12-07):
// KV routing at concurrency 1 (12 hits at 348-383 ms, 12 misses at 673-713 ms), and round-robin
// with one request that failed.
const fixture = (name: string) => readFileSync(join(FIXTURES, 'aiperf', name), 'utf8');
const KV_RECORDS = fixture('mocker-routing-kv-c1.profile_export.jsonl');
const RR_RECORDS = fixture('mocker-routing-rr-c1-error.profile_export.jsonl');
const RR_EXPORT = fixture('mocker-routing-rr-c1-error.profile_export_aiperf.json');
const ROUTING: BenchResult = JSON.parse(readFileSync(join(FIXTURES, 'bench', 'state', 'bench', '20261205-101500-000-routing', 'result.json'), 'utf8'));

describe('AIPerf\'s per-request records and its errors', () => {
  it('reads each completed request\'s TTFT and cached tokens; a failed request is left out', () => {
    const kv = samplesFromRecords(KV_RECORDS);
    expect(kv.ttftMs).toHaveLength(24);
    expect(kv.ttftMs[0]).toBe(676.7);
    expect(hitFlags(kv)!.filter(Boolean)).toHaveLength(12);
    const rr = samplesFromRecords(RR_RECORDS);
    expect(rr.ttftMs).toHaveLength(23);
    expect(hitFlags(rr)!.filter(Boolean)).toHaveLength(6);
  });

  it('a release without cached_tokens: hits unknown, never all misses; junk lines are skipped', () => {
    const lines = KV_RECORDS.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    delete lines[3].metrics.usage_prompt_cache_read_tokens;
    const s = samplesFromRecords(['not json', ...lines.map((l) => JSON.stringify(l)), '{"metrics": 3}'].join('\n'));
    expect(s.ttftMs).toHaveLength(24);
    expect(s.cachedTokens).toBeNull();
    expect(hitFlags(s)).toBeNull();
  });

  it('a hit is at least half of the prompt from the cache: the boundary', () => {
    expect(hitFlags({ ttftMs: [1, 1, 1], cachedTokens: [50, 49, 0], promptTokens: [100, 100, 0] })).toEqual([true, false, false]);
  });

  it('the real error text, its exception repr unwrapped; succeeded and failed requests counted apart', () => {
    const m = metricsFromExport(RR_EXPORT);
    expect(m).toMatchObject({ requests: 23, errors: 1 });
    expect(m.errorTexts).toEqual([{ text: 'InvalidInferenceResultError: Invalid inference result: No responses with actual content were received from the server (only usage/metadata, null/empty data, or [DONE] markers)', count: 1 }]);
    expect(m.ttftMeanMs).toBeCloseTo(JSON.parse(RR_EXPORT).time_to_first_token.avg, 6);
    expect(errorText({ code: 503, message: 'Service Unavailable' })).toBe('HTTP 503: Service Unavailable');
    expect(errorText(null)).toBe('error');
  });
});

describe('two modes and the percentiles on their gap', () => {
  it('the real KV run is two-valued, p50 on the gap; one mode, or a side under 10%, is not', () => {
    const m = twoModes(samplesFromRecords(KV_RECORDS).ttftMs)!;
    expect(m.lower).toMatchObject({ n: 12, min: 347.9, max: 382.8 });
    expect(m.upper).toMatchObject({ n: 12, min: 673 });
    expect(twoModes([100, 101, 102, 103, 104, 105, 106, 107, 108, 109])).toBeNull();
    // 1 of 10 far away: 10% is enough (boundary); with 11 values, 1 is under 10%.
    expect(twoModes([...Array(9).fill(100), 700])).not.toBeNull();
    expect(twoModes([...Array(10).fill(100), 700])).toBeNull();
    expect(twoModes([1, 2, 3])).toBeNull();
  });
});

const run = (concurrency: number, records: string, errors = 0): BenchVariant['runs'][number] => {
  const samples = samplesFromRecords(records);
  return {
    concurrency, repeat: 0, seed: 0, export: 'x', samples: { ...samples },
    metrics: {
      ttftP50Ms: 500, ttftP90Ms: 690, ttftMeanMs: 520, itlP50Ms: 4, itlMeanMs: 4, outputTokensPerSec: 14, requestsPerSec: 1.7, cacheHitShare: 0.48,
      requests: samples.ttftMs.length, errors, errorTexts: errors ? [{ text: 'InvalidInferenceResultError: x', count: errors }] : [],
    },
  };
};
const routingDoc = (): BenchResult => ({
  ...ROUTING, isolation: 'fresh-prefixes', concurrency: [1], repeats: 1,
  variants: [
    { ...ROUTING.variants[0], name: 'kv-events', runs: [run(1, KV_RECORDS)] },
    { ...ROUTING.variants[2], name: 'round-robin', runs: [run(1, RR_RECORDS, 1)] },
    { ...ROUTING.variants[4], control: { gate: 'kv.events', why: 'workers that publish no KV events' } },
  ],
});

describe('the routing report: headline, hit/miss split, errors, control', () => {
  it('headline per preset: routing the hit share and the TTFT of hits and misses; agg-vs-disagg TTFT and ITL', () => {
    expect(headlineOf('routing')).toEqual(['cacheHitShare', 'ttftMeanMs', 'ttftHitMs', 'ttftMissMs']);
    expect(headlineOf('agg-vs-disagg')).toEqual(['ttftMeanMs', 'itlMeanMs']);
    expect(headlineOf(null)).toEqual(['ttftMeanMs', 'outputTokensPerSec']);
  });

  it('the TTFT of hits and of misses per variant, from the requests themselves', () => {
    const s = summarize(routingDoc());
    const cell = (key: string, row: number) => s.tables.find((t) => t.metric.key === key)!.rows[row].cells[0];
    expect(cell('ttftHitMs', 0)).toMatchObject({ kind: 'value' });
    expect((cell('ttftHitMs', 0) as { median: number }).median).toBeCloseTo(359.7, 1);
    expect((cell('ttftMissMs', 0) as { median: number }).median).toBeCloseTo(686.3, 0);
    expect(s.errors.get('round-robin')![0]).toEqual({ failed: 1, sent: 24, perRun: [1], texts: [{ text: 'InvalidInferenceResultError: x', count: 1 }] });
    expect(s.modes.find((m) => m.label === 'kv-events')!.onGap).toEqual([50]);
  });

  it('piped: headline first, the distribution with hits and misses, the gap note, the errors flagged with AIPerf\'s text, the control as expected', () => {
    const text = renderResult(routingDoc(), { width: null, utf8: true }).text;
    expect(text).toContain('\ncache: one load run per variant, from a cold prefix cache (each variant freshly started)\n');
    expect(text).toContain('\nvariants: 2 measured, 1 control invalid as expected\n  kv-events-off: control: invalid as expected (kv.events: ');
    expect(text.indexOf('\nheadline: cache-hit share, TTFT mean, TTFT mean of cache hits, TTFT mean of cache misses\n')).toBeLessThan(text.indexOf('\nTTFT p50'));
    expect(text).toMatch(/^kv-events  c1 +\|.+\| {2}12 hits 360 ms, 12 misses 686 ms$/m);
    expect(text).toMatch(/^round-robin  c1 +\|.+\| {2}6 hits \d+ ms, 17 misses \d+ ms$/m);
    expect(text).toContain('\n  kv-events at concurrency 1: 50.0% at 348-383 ms, the rest at 673-713 ms: p50 sits on the gap between them\n');
    expect(text).toMatch(/^round-robin +1 of 24 \(4\.2%\) !$/m);
    expect(text).toContain('\n! round-robin: 1 of 24 requests failed (4.2%); its numbers are of the 23 that completed\n    1 x "InvalidInferenceResultError: x"\n');
    // Every table shows the failed requests beside the number.
    for (const block of text.split('\n\n').filter((b) => /^(TTFT (p50|p90|mean)|ITL|output tokens|request throughput|cache-hit)/.test(b))) expect(block).toMatch(/^round-robin .* 1 err!$/m);
    expect(text).toMatch(/^kv-events-off +INVALID \(control, as expected\)$/m);
  });

  it('the plot: the headline panels, errors in the legend and under the bars, the control named, a title of what was compared', () => {
    const svg = renderResult(routingDoc(), { width: null, utf8: true }).svg();
    expect(svg).toContain('>routing: kv-events vs round-robin (control: kv-events-off)</text>');
    for (const t of ['cache-hit share (%)', 'TTFT mean (ms)', 'TTFT mean of cache hits (ms)', 'TTFT mean of cache misses (ms)']) expect(svg).toContain(`>${t}, `);
    expect(svg).not.toContain('>TTFT p50 (ms), ');
    expect(svg).toContain('>round-robin, 1 failed of 24 !</text>');
    expect(svg).toContain('>1 err</text>');
    expect(svg).toContain('>kv-events-off (control: INVALID as expected)</text>');
  });
});

describe('controls and the exit code', () => {
  const ctl = { gate: 'kv.events', why: 'no events' };
  it('invalid by its gate: as expected, no failure; by another gate, measured or failed: a failure', () => {
    expect(controlOutcome({ status: 'invalid', reason: 'kv.events: none', control: ctl })).toEqual({ kind: 'as-expected', text: 'control: invalid as expected (kv.events: none)' });
    expect(variantFails({ status: 'invalid', reason: 'kv.events: none', control: ctl })).toBe(false);
    expect(variantFails({ status: 'invalid', reason: 'kv.eventsx: none', control: ctl })).toBe(true);
    expect(variantFails({ status: 'invalid', reason: 'processes.alive: agg-0 died', control: ctl })).toBe(true);
    expect(controlOutcome({ status: 'measured', reason: null, control: ctl })!.text).toBe('control: expected invalid by kv.events (no events), but it passed every gate and was measured: kv.events did not catch it');
    expect(variantFails({ status: 'measured', reason: null, control: ctl })).toBe(true);
    expect(variantFails({ status: 'failed', reason: 'up exited 1', control: ctl })).toBe(true);
    expect(variantFails({ status: 'missing', reason: 'interrupted', control: ctl })).toBe(false);
    expect(variantFails({ status: 'invalid', reason: 'kv.events: none' })).toBe(true);
  });
});

describe('each load run from a cold prefix cache', () => {
  it('its own AIPerf seed: the bench\'s seed + k for the k-th load run of a variant', () => {
    const doc = { seed: 5, repeats: 3 };
    const seeds = [0, 1].flatMap((ci) => [0, 1, 2].map((r) => loadSeed(doc, ci, r)));
    expect(seeds).toEqual([5, 6, 7, 8, 9, 10]);
  });
});
