import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLineToText, normalizeLine, parseKvTokens, stripAnsi, stripPrefixes } from '../../../src/diagnose/line.js';
import { SAMPLES } from '../../helpers/cli.js';

const KV = '(EngineCore pid=48211) INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens';

describe('line normalisation', () => {
  it('strips ANSI colour codes as vLLM prints them on a TTY', () => {
    const coloured = '\x1b[1;36m(EngineCore pid=1309)\x1b[0;0m \x1b[32mINFO\x1b[0m 04-27 07:55:18 [core.py:283] message';
    expect(stripAnsi(coloured)).toBe('(EngineCore pid=1309) INFO 04-27 07:55:18 [core.py:283] message');
    expect(normalizeLine(coloured)).toBe('INFO 04-27 07:55:18 [core.py:283] message');
  });

  it('drops a trailing CR (CRLF logs)', () => {
    expect(normalizeLine(`${KV}\r`)).toBe('INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens');
  });

  it('strips the process prefixes vLLM subprocesses carry', () => {
    for (const p of ['(EngineCore pid=1309) ', '(EngineCore_DP0 pid=1309) ', '(VllmWorker rank=0 pid=1309) ', '(APIServer pid=1309) ']) {
      expect(stripPrefixes(`${p}INFO 04-27 07:55:18 [core.py:283] message`)).toBe('INFO 04-27 07:55:18 [core.py:283] message');
    }
  });

  it('keeps ordinary parenthesised text', () => {
    expect(stripPrefixes('(elapsed: 10.1 seconds) done')).toBe('(elapsed: 10.1 seconds) done');
  });

  it('strips the docker compose prefix, also around a vLLM prefix and colours', () => {
    expect(normalizeLine(`worker-1  | ${KV}`)).toBe('INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens');
    expect(normalizeLine(`\x1b[36mdynamo_frontend_1  |\x1b[0m hello`)).toBe('hello');
    expect(stripPrefixes('INFO | not a compose line')).toBe('INFO | not a compose line');
  });

  it('turns a Dynamo JSON-lines record into the text line with its fields', () => {
    const raw = readFileSync(join(SAMPLES, 'logs', 'frontend-kv-events-disabled.jsonl'), 'utf8').trim();
    const text = jsonLineToText(raw)!;
    expect(text).toContain('WARN dynamo_llm::kv_router::indexer::recovery::source_health: KV-event publishing is disabled for a role that requires KV events');
    expect(text).toContain('diagnostic_code="kv_event_publisher_disabled"');
    expect(text).toContain('worker_id=7587888512394541');
    expect(text.startsWith('2026-10-07T05:12:20.704420Z WARN')).toBe(true);
  });

  it('reads the nested tracing-subscriber form and leaves non-JSON alone', () => {
    expect(jsonLineToText('{"timestamp":"t","level":"WARN","fields":{"message":"Address already in use","port":8000},"target":"x"}'))
      .toBe('t WARN x: Address already in use port=8000');
    expect(jsonLineToText('{not json')).toBeNull();
    expect(jsonLineToText('[1,2]')).toBeNull();
    expect(normalizeLine('{broken json')).toBe('{broken json');
  });

  it('extracts the KV size, also from the combined line', () => {
    expect(parseKvTokens(normalizeLine(KV))).toBe(14816);
    const combined = readFileSync(join(SAMPLES, 'logs', 'worker-combined-kv-line.log'), 'utf8').split('\n')[1];
    expect(parseKvTokens(combined)).toBe(9152);
    expect(parseKvTokens('Available KV cache memory: 1.58 GiB')).toBeNull();
    expect(parseKvTokens('GPU KV cache size: 1,234,567 tokens')).toBe(1234567);
  });
});

describe('the prefixes collectors put in front of a line', () => {
  const vllm = 'ERROR 06-30 13:53:19 [core.py:515] EngineCore failed to start.';
  it('strips docker --timestamps, CI, Buildkite, journald and kubectl prefixes, nested too', () => {
    for (const p of [
      '2025-01-01T00:00:00.123456789Z ', '2021-03-06T10:08:42.4805754Z ', '[2026-02-24T20:21:58Z] ', 'Jan 28 10:40:07 localhost bash[367371]: ',
      'Dec  5 14:00:00 gpu-host python3[4242]: ', '[pod/vllm-agg-0/main] ', '[pod/vllm-agg-0/main] 2025-01-01T00:00:00.5Z ',
    ]) expect(normalizeLine(`${p}(EngineCore_DP0 pid=7) ${vllm}`), p).toBe(vllm);
  });

  it('keeps a program\'s own timestamp followed by its level (Dynamo\'s tracing), under docker\'s too', () => {
    const dyn = '2025-10-13T18:18:46.927697Z ERROR dynamo_llm::http::service::service_v2: Failed to bind server';
    expect(normalizeLine(dyn)).toBe(dyn);
    expect(normalizeLine(`2025-10-13T18:18:47.000000001Z ${dyn}`)).toBe(dyn);
  });

  it('strips Ray\'s and nested vLLM process prefixes', () => {
    expect(normalizeLine(`(RayWorkerWrapper pid=206994, ip=192.168.10.25) ${vllm}`)).toBe(vllm);
    expect(normalizeLine(`(vLLMHttpServer pid=6840) (Worker pid=7181) ${vllm}`)).toBe(vllm);
  });

  it('leaves lines that only look alike', () => {
    for (const l of ['2025 was a good year', 'Jan 28 meeting: notes', '[pod] done', '[2026-02-24] release']) expect(normalizeLine(l)).toBe(l);
  });
});
