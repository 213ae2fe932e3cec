import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dtypeBytes, kvBytesPerToken, kvShapeFromConfig, kvTokensFor } from '../../../src/plan/kv-math.js';
import { FIXTURES } from '../../helpers/cli.js';

// The config.json shapes met in the wild, and the limits of what counts as a real model's config.
const config = (name: string) => JSON.parse(readFileSync(join(FIXTURES, 'configs', `${name}.config.json`), 'utf8')) as Record<string, unknown>;
const qwen = () => config('Qwen3-0.6B');
const { torch_dtype: _qwenDtype, ...qwenNoDtype } = config('Qwen3-0.6B');

describe('config.json shapes', () => {
  it('num_key_value_heads null (no grouped-query attention): every attention head has its KV', () => {
    const shape = kvShapeFromConfig({ ...qwen(), num_key_value_heads: null }, 'cfg.json');
    expect(shape.kvHeads).toBe(16);
  });

  it('kv_lora_rank null marks a dense model, not MLA', () => {
    const shape = kvShapeFromConfig({ ...qwen(), kv_lora_rank: null }, 'cfg.json');
    expect(shape.mla).toBe(false);
    expect(kvBytesPerToken(shape)).toBe(114_688);
  });

  it('a config with its own layers beside a text_config is read at the top level', () => {
    const shape = kvShapeFromConfig({ ...qwen(), text_config: { num_hidden_layers: 2, num_attention_heads: 2, head_dim: 8 } }, 'cfg.json');
    expect(shape).toMatchObject({ layers: 28, kvHeads: 8, headDim: 128 });
  });

  it('text_config null is no wrapper', () => {
    expect(kvShapeFromConfig({ ...qwen(), text_config: null }, 'cfg.json').layers).toBe(28);
  });

  it('a multimodal wrapper: the root config\'s dtype wins over its text_config\'s, as vLLM reads it', () => {
    const inner = { ...qwenNoDtype, torch_dtype: 'float16' };
    expect(kvShapeFromConfig({ torch_dtype: 'bfloat16', text_config: inner }, 'mm').dtype).toBe('bfloat16');
    // Only the text config names one: that one.
    expect(kvShapeFromConfig({ text_config: inner }, 'mm')).toMatchObject({ dtype: 'float16', dtypeAssumed: false });
  });

  it('newer transformers write "dtype" instead of "torch_dtype"', () => {
    expect(kvShapeFromConfig({ ...qwenNoDtype, dtype: 'float16' }, 'cfg.json')).toMatchObject({ dtype: 'float16', dtypeBytes: 2, dtypeAssumed: false });
    expect(kvShapeFromConfig({ ...qwenNoDtype, dtype: 'float8_e4m3fn' }, 'cfg.json').dtypeBytes).toBe(1);
  });

  it('torch_dtype null: bfloat16 assumed, and said', () => {
    expect(kvShapeFromConfig({ ...qwen(), torch_dtype: null }, 'cfg.json')).toMatchObject({ dtype: 'bfloat16', dtypeAssumed: true });
  });

  it('no dtype in the config but --kv-dtype given: nothing is assumed', () => {
    expect(kvShapeFromConfig(qwenNoDtype, 'cfg.json', { kvDtype: 'fp8' })).toMatchObject({ dtype: 'fp8', dtypeAssumed: false });
    expect(kvShapeFromConfig(qwenNoDtype, 'cfg.json', { kvDtype: 'fp8' }).dtypeNote).toBeUndefined();
  });

  it('every spelling of float32 counts 2 bytes, with the note; 16-bit ones carry no note', () => {
    for (const d of ['float32', 'float', 'fp32', 'FLOAT32']) {
      const shape = kvShapeFromConfig({ ...qwen(), torch_dtype: d }, 'cfg.json');
      expect(shape, d).toMatchObject({ dtype: 'bfloat16', dtypeBytes: 2, dtypeNote: `config says ${d}; vLLM runs float32 models in 16-bit (--dtype auto)` });
    }
    expect(kvShapeFromConfig(qwen(), 'cfg.json').dtypeNote).toBeUndefined();
  });

  it('a dtype the arithmetic does not know names the file and the field, and lists the known ones', () => {
    expect(() => kvShapeFromConfig({ ...qwen(), torch_dtype: 'int4' }, 'cfg.json')).toThrow(
      'cfg.json: torch_dtype: unknown dtype "int4"; expected one of float32, fp32, float, bfloat16, bf16, float16, fp16, half, fp8, fp8_e4m3, fp8_e5m2, float8_e4m3fn, float8_e5m2, int8',
    );
    expect(() => dtypeBytes('int4')).toThrow(/^dtype: unknown dtype "int4"/);
    expect(dtypeBytes('BF16')).toBe(2);
  });
});

describe('what is not a real model\'s config', () => {
  it('the missing field is named with what it is needed for', () => {
    expect(() => kvShapeFromConfig(config('missing-layers'), 'cfg.json')).toThrow(/^cfg\.json: missing field "num_hidden_layers" needed for KV arithmetic$/);
    const { hidden_size: _h, ...noHidden } = config('TinyLlama-1.1B-Chat-v1.0');
    expect(() => kvShapeFromConfig(noHidden, 'x')).toThrow(/^x: missing field "hidden_size" needed for KV arithmetic \(there is no head_dim\)$/);
    const { qk_rope_head_dim: _r, ...noRope } = config('DeepSeek-V2-Lite');
    expect(() => kvShapeFromConfig(noRope, 'x')).toThrow(/^x: missing field "qk_rope_head_dim" needed for MLA KV arithmetic \(with kv_lora_rank\)$/);
  });

  it('hidden_size that does not split into whole heads asks for head_dim', () => {
    const odd = { ...config('TinyLlama-1.1B-Chat-v1.0'), hidden_size: 2050 };
    expect(() => kvShapeFromConfig(odd, 'cfg.json')).toThrow('cfg.json: hidden_size 2050 / num_attention_heads 32 is not a whole head_dim; add "head_dim"');
  });

  it('a size of exactly 16,777,216 is still a size; one more is not', () => {
    const at = { num_hidden_layers: 1 << 24, num_attention_heads: 1, head_dim: 1, torch_dtype: 'bfloat16' };
    expect(kvShapeFromConfig(at, 'cfg.json').layers).toBe(1 << 24);
    expect(() => kvShapeFromConfig({ ...at, num_hidden_layers: (1 << 24) + 1 }, 'cfg.json')).toThrow('field "num_hidden_layers" is 16777217');
  });

  it('exactly 1 TiB of KV per token is the largest accepted; more is refused', () => {
    // 2^13 layers x 2^12 KV heads x 2^12 head_dim x 2 (K and V) x 4 bytes = 2^40.
    const at = { num_hidden_layers: 1 << 13, num_attention_heads: 1 << 12, head_dim: 1 << 12 };
    expect(kvShapeFromConfig(at, 'cfg.json').layers).toBe(1 << 13);
    expect(() => kvShapeFromConfig({ ...at, num_hidden_layers: (1 << 13) + 1 }, 'cfg.json')).toThrow(/more than 1 TiB per token/);
  });
});

describe('a worker\'s KV tokens', () => {
  it('a fraction that leaves exactly nothing after weights and overhead: 0 tokens', () => {
    expect(kvTokensFor({ gpuTotalMiB: 8000, fraction: 0.5, weightsMiB: 3600, overheadMiB: 400, bytesPerToken: 114_688 })).toBe(0);
    expect(kvTokensFor({ gpuTotalMiB: 8000, fraction: 0.5, weightsMiB: 3599, overheadMiB: 400, bytesPerToken: 114_688 })).toBe(9);
  });
});
