import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAMPLES } from '../../helpers/cli.js';
import { classifyLine, compileLogPattern, frontendLive, kvLineHiddenBy, modelListed, parseTokenCount, stripAnsi, workerHealthy } from '../../../src/run/readiness.js';
import { KV_LINE_PATTERN } from '../../../src/plan/types.js';
import type { HttpProbe } from '../../../src/host/types.js';

const sample = (name: string) => readFileSync(join(SAMPLES, 'logs', name), 'utf8').split('\n').filter(Boolean);
const KV = compileLogPattern(KV_LINE_PATTERN);
const probe = (body: unknown, status = 200): HttpProbe => ({ url: 'http://x', ok: status < 400, status, body, error: null });

describe('classifyLine on real worker logs', () => {
  it('finds the KV line of a ready worker (thousands separators) and its loading lines', () => {
    const signals = sample('worker-agg-ready.log').map((l) => classifyLine(l, KV));
    expect(signals.filter((s) => s?.kind === 'kv')).toEqual([{ kind: 'kv', tokens: 14_816 }]);
    // Only vLLM's own loading lines: Resolved architecture, Starting to load model, Loading weights
    // took, Model loading took. "Starting vLLM worker" is no line Dynamo prints (FACTS §4).
    const loading = sample('worker-agg-ready.log').filter((l) => classifyLine(l, KV)?.kind === 'loading');
    expect(loading.map((l) => /\] (\S+ \S+)/.exec(l)?.[1] ?? l)).toEqual(['Resolved architecture:', 'Starting to', 'Loading weights', 'Model loading']);
    expect(classifyLine('2026-10-07T05:12:01.377120Z  INFO main.init: Starting vLLM worker model="Qwen/Qwen3-0.6B"', KV)).toBeNull();
  });

  it('the real mocker (1.6.1) is loading from its "Creating mocker engine" line, and logs no KV line', () => {
    const lines = sample('mocker-1.6.1.log');
    const signals = lines.map((l) => classifyLine(l, KV));
    expect(signals.filter((s) => s?.kind === 'kv')).toEqual([]);
    expect(lines.filter((l, i) => signals[i]?.kind === 'loading').map((l) => /dynamo_llm::mocker\S*: (\w+ \w+ \w+)/.exec(stripAnsi(l))?.[1])).toEqual(['Creating mocker engine']);
  });

  it('warns when VLLM_LOGGING_LEVEL hides the INFO KV line', () => {
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: 'WARNING' })).toBe('WARNING');
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: 'error' })).toBe('error');
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: 'INFO' })).toBeNull();
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: 'DEBUG' })).toBeNull();
    expect(kvLineHiddenBy({})).toBeNull();
  });

  it('reads the combined KV + concurrency line of the newest builds', () => {
    expect(classifyLine(sample('worker-combined-kv-line.log')[1], KV)).toEqual({ kind: 'kv', tokens: 9152 });
  });

  it('matches through ANSI colours (vLLM colours its prefixes without NO_COLOR)', () => {
    const coloured = '\u001b[36m(EngineCore pid=48211)\u001b[0m INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens';
    expect(classifyLine(coloured, KV)).toEqual({ kind: 'kv', tokens: 14_816 });
    expect(stripAnsi(coloured)).toBe('(EngineCore pid=48211) INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens');
  });

  it('reports a Hugging Face lock wait with the lock path and elapsed seconds', () => {
    const s = classifyLine(sample('worker-lock-wait.log')[1], KV);
    expect(s).toEqual({
      kind: 'lock-wait',
      lockPath: '/home/exp/.cache/huggingface/hub/.locks/models--Qwen--Qwen3-0.6B/f47f71177f32bcd101b7573ec9171e6a57f4f4c31148d38e382306f42996874b.lock',
      elapsedS: 10.1,
    });
    expect(classifyLine('still waiting to acquire lock on /c/.locks/m/x.lock', KV)).toMatchObject({ kind: 'lock-wait', lockPath: '/c/.locks/m/x.lock' });
  });

  it('ignores lines that say nothing about readiness', () => {
    expect(classifyLine(sample('worker-error804.log')[1], KV)).toBeNull();
    expect(classifyLine('Available KV cache memory: 1.58 GiB', KV)).toBeNull();
  });

  it('parses token counts with separators', () => {
    expect(parseTokenCount('14,816')).toBe(14_816);
    expect(parseTokenCount('x')).toBeNull();
  });
});

describe('HTTP readiness judgements (FACTS §4 shapes)', () => {
  it('worker /health: ready only on {"status":"ready"}', () => {
    expect(workerHealthy(probe({ status: 'ready', endpoints: ['generate'] }))).toBe(true);
    expect(workerHealthy(probe({ status: 'notready' }, 503))).toBe(false);
    expect(workerHealthy({ url: 'x', ok: false, status: null, body: null, error: 'connection refused' })).toBe(false);
  });

  it('frontend /live and /v1/models', () => {
    expect(frontendLive(probe({ status: 'live' }))).toBe(true);
    expect(frontendLive(probe(null, 503))).toBe(false);
    const list = probe({ object: 'list', data: [{ id: 'Qwen/Qwen3-0.6B', object: 'model' }] });
    expect(modelListed(list, 'Qwen/Qwen3-0.6B')).toBe(true);
    expect(modelListed(probe({ object: 'list', data: [] }), 'Qwen/Qwen3-0.6B')).toBe(false);
  });
});
