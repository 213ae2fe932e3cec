import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aiperfArgs } from '../../../src/bench/aiperf-argv.js';
import { metricsFromExport } from '../../../src/host/python/aiperf-export.js';
import { FIXTURES } from '../../helpers/cli.js';

// Exports written by real runs: aiperf 0.13.0 against `up mocker` on ai-dynamo 1.6.1 (14:12 and
// 14:14 UTC, 2026-12-05): 4 prefixes of 512 tokens x 24 requests through the KV router, and 12
// requests at concurrency 2 with no prefixes.
const fixture = (name: string) => readFileSync(join(FIXTURES, 'aiperf', name), 'utf8');

describe('AIPerf argv', () => {
  const base = { url: 'http://127.0.0.1:8000', model: 'Qwen/Qwen3-0.6B', tokenizer: 'Qwen/Qwen3-0.6B', concurrency: 4, requests: 72, seed: 7, artifactDir: '/tmp/x' };

  it('a shared-prefix pool: N prefixes of L tokens, the varying tail as --isl, one prompt per request', () => {
    const a = aiperfArgs({ ...base, shape: { inputTokens: 32, outputTokens: 16, prefixes: { count: 12, tokens: 1024 } } });
    const flag = (f: string) => a[a.indexOf(f) + 1];
    expect(a[0]).toBe('profile');
    expect(flag('--num-prefix-prompts')).toBe('12');
    expect(flag('--prefix-prompt-length')).toBe('1024');
    expect(flag('--isl')).toBe('32');
    expect(flag('--osl')).toBe('16');
    expect(flag('--concurrency')).toBe('4');
    expect(flag('--request-count')).toBe('72');
    expect(flag('--num-dataset-entries')).toBe('72');
    expect(flag('--random-seed')).toBe('7');
    expect(flag('--tokenizer')).toBe('Qwen/Qwen3-0.6B');
    expect(flag('--artifact-dir')).toBe('/tmp/x');
    expect(flag('--endpoint-type')).toBe('chat');
    expect(a).toContain('--streaming');
  });

  it('no prefix pool: no prefix flags', () => {
    const a = aiperfArgs({ ...base, shape: { inputTokens: 512, outputTokens: 64, prefixes: null } });
    expect(a).not.toContain('--num-prefix-prompts');
    expect(a[a.indexOf('--isl') + 1]).toBe('512');
  });
});

describe('AIPerf export parser (real exports)', () => {
  it('reads TTFT, ITL, throughput and the cache-hit share from the frontend\'s cached_tokens', () => {
    const m = metricsFromExport(fixture('mocker-kv-c1.profile_export_aiperf.json'));
    expect(m.ttftP50Ms).toBeCloseTo(57.08, 2);
    expect(m.ttftP90Ms).toBeCloseTo(137.19, 2);
    expect(m.itlP50Ms).toBeCloseTo(11.17, 2);
    expect(m.outputTokensPerSec).toBeCloseTo(31.14, 2);
    expect(m.requestsPerSec).toBeCloseTo(4.15, 2);
    // 10,240 cached of 13,344 prompt tokens
    expect(m.cacheHitShare).toBeCloseTo(10240 / 13344, 6);
    expect(m.requests).toBe(24);
    expect(m.errors).toBe(0);
  });

  it('no cache hits at all is 0, not unknown', () => {
    expect(metricsFromExport(fixture('mocker-kv-c2-no-prefix.profile_export_aiperf.json')).cacheHitShare).toBe(0);
  });

  it('a release that reports no cached_tokens: unknown (null), never guessed', () => {
    const d = JSON.parse(fixture('mocker-kv-c1.profile_export_aiperf.json'));
    delete d.total_usage_prompt_cache_read_tokens;
    expect(metricsFromExport(JSON.stringify(d)).cacheHitShare).toBeNull();
  });

  it('errors are counted; no request completed is an error naming the failures', () => {
    const d = JSON.parse(fixture('mocker-kv-c1.profile_export_aiperf.json'));
    d.error_summary = [{ error_details: { code: 500 }, count: 3 }];
    expect(metricsFromExport(JSON.stringify(d))).toMatchObject({ errors: 3, errorTexts: [{ text: 'HTTP 500', count: 3 }] });
    d.completed_request_count = { unit: 'requests', avg: 0 };
    d.request_count = { unit: 'requests', avg: 0 };
    expect(() => metricsFromExport(JSON.stringify(d))).toThrow('no request completed (3 failed: "HTTP 500" x3)');
  });

  it('a missing metric or a changed unit is named', () => {
    const d = JSON.parse(fixture('mocker-kv-c1.profile_export_aiperf.json'));
    d.time_to_first_token.unit = 'sec';
    expect(() => metricsFromExport(JSON.stringify(d))).toThrow('time_to_first_token is in sec, expected ms');
    delete d.request_throughput;
    d.time_to_first_token.unit = 'ms';
    expect(() => metricsFromExport(JSON.stringify(d))).toThrow('no request_throughput.avg in the export');
    expect(() => metricsFromExport('[]')).toThrow('not a JSON object');
  });
});

describe('aiperfEnv', () => {
  it('a local tokenizer folder runs AIPerf without the offline variables (0.13.0 takes any name for a hub id then); a hub id keeps them', async () => {
    const { aiperfEnv } = await import('../../../src/bench/aiperf-argv.js');
    const env = { HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', PATH: '/bin' };
    expect(aiperfEnv(env, '/opt/dynamo-dev/models/tiny')).toEqual({ PATH: '/bin' });
    expect(aiperfEnv(env, 'Qwen/Qwen3-0.6B')).toBe(env);
  });
});
