import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../../src/errors.js';
import {
  dtypeBytes, kvBytesPerToken, kvShapeFromConfig, kvTokensFor, MIB, overheadMiB, tokensPerGiB, transferMs,
} from '../../../src/plan/kv-math.js';
import { FIXTURES } from '../../helpers/cli.js';

const config = (name: string) => JSON.parse(readFileSync(join(FIXTURES, 'configs', `${name}.config.json`), 'utf8')) as Record<string, unknown>;

describe('KV arithmetic', () => {
  it('Qwen3-0.6B: 28 layers x 8 KV heads x head_dim 128 x 2 x 2 bytes = 114,688 bytes per token', () => {
    const shape = kvShapeFromConfig(config('Qwen3-0.6B'), 'qwen');
    expect(shape).toMatchObject({ layers: 28, kvHeads: 8, headDim: 128, dtype: 'bfloat16', dtypeBytes: 2, mla: false });
    const bpt = kvBytesPerToken(shape);
    expect(bpt).toBe(114_688);
    expect(tokensPerGiB(bpt)).toBe(9_362);
    // FACTS §3: 1,500 tokens = 164 MiB; at 608 MB/s (10^6 bytes) about 280 ms.
    expect(1500 * bpt).toBe(172_032_000);
    expect((1500 * bpt) / MIB).toBeCloseTo(164.06, 1);
    expect(transferMs(1500 * bpt, 608)).toBeCloseTo(282.95, 1);
  });

  it('takes head_dim from the config, not hidden_size / heads (which gives 64 for Qwen3)', () => {
    const c = config('Qwen3-0.6B');
    expect((c.hidden_size as number) / (c.num_attention_heads as number)).toBe(64);
    expect(kvShapeFromConfig(c, 'qwen').headDim).toBe(128);
  });

  it('Llama without head_dim: hidden_size / heads (TinyLlama: 22 x 4 x 64 x 2 x 2 = 22,528)', () => {
    const shape = kvShapeFromConfig(config('TinyLlama-1.1B-Chat-v1.0'), 'tinyllama');
    expect(shape.headDim).toBe(64);
    expect(kvBytesPerToken(shape)).toBe(22_528);
  });

  it('MLA (DeepSeek-V2-Lite): one latent of kv_lora_rank + qk_rope_head_dim per layer, factor 1', () => {
    const shape = kvShapeFromConfig(config('DeepSeek-V2-Lite'), 'dsv2');
    expect(shape).toMatchObject({ mla: true, layers: 27, headDim: 576, kvLoraRank: 512, qkRopeHeadDim: 64 });
    expect(kvBytesPerToken(shape)).toBe(27 * 576 * 2);
    // The latent is not split across tensor-parallel ranks.
    expect(kvBytesPerToken(shape, 2)).toBe(31_104);
  });

  it('--tp divides the KV heads, at least one per GPU', () => {
    const shape = kvShapeFromConfig(config('Qwen3-0.6B'), 'qwen');
    expect(kvBytesPerToken(shape, 2)).toBe(57_344);
    expect(kvBytesPerToken(shape, 8)).toBe(14_336);
    expect(kvBytesPerToken(shape, 16)).toBe(14_336);
  });

  it('--kv-dtype overrides the model dtype', () => {
    const shape = kvShapeFromConfig(config('Qwen3-0.6B'), 'qwen', { kvDtype: 'fp8' });
    expect(kvBytesPerToken(shape)).toBe(57_344);
    expect(kvShapeFromConfig(config('Qwen3-0.6B'), 'qwen', { kvDtype: 'auto' }).dtypeBytes).toBe(2);
    expect(() => kvShapeFromConfig(config('Qwen3-0.6B'), 'qwen', { kvDtype: 'int3' })).toThrow(/--kv-dtype: unknown dtype "int3"/);
    expect(dtypeBytes('float32')).toBe(4);
  });

  it('names the missing field', () => {
    expect(() => kvShapeFromConfig(config('missing-layers'), 'cfg.json')).toThrow(UserError);
    expect(() => kvShapeFromConfig(config('missing-layers'), 'cfg.json')).toThrow('cfg.json: missing field "num_hidden_layers"');
    const noHidden = { ...config('TinyLlama-1.1B-Chat-v1.0'), hidden_size: undefined };
    expect(() => kvShapeFromConfig(noHidden, 'x')).toThrow('missing field "hidden_size"');
    const mlaNoRope = { ...config('DeepSeek-V2-Lite'), qk_rope_head_dim: undefined };
    expect(() => kvShapeFromConfig(mlaNoRope, 'x')).toThrow('missing field "qk_rope_head_dim"');
  });

  it('a size that is 0, negative, fractional, huge or not a number is an input error naming the field, never a negative or infinite result', () => {
    const q = config('Qwen3-0.6B');
    for (const [k, v] of [['num_key_value_heads', -8], ['head_dim', 0], ['num_hidden_layers', 1e308], ['num_attention_heads', 2.5], ['head_dim', '128'], ['num_key_value_heads', 1 << 25]] as const) {
      expect(() => kvShapeFromConfig({ ...q, [k]: v }, 'cfg.json'), `${k}=${v}`).toThrow(`cfg.json: field "${k}" is ${JSON.stringify(v)}; expected a whole number from 1 to 16777216`);
    }
    expect(() => kvShapeFromConfig({ ...config('DeepSeek-V2-Lite'), kv_lora_rank: 0 }, 'cfg.json')).toThrow('field "kv_lora_rank" is 0');
    const huge = { ...q, num_hidden_layers: 1 << 24, num_key_value_heads: 1 << 20, head_dim: 1 << 20 };
    expect(() => kvShapeFromConfig(huge, 'cfg.json')).toThrow(/gives more than 1 TiB per token; not a real model's config/);
  });

  it('reads text_config of multimodal wrappers and assumes bfloat16 without a dtype', () => {
    const { torch_dtype: _d, ...inner } = config('Qwen3-0.6B');
    const shape = kvShapeFromConfig({ architectures: ['X'], text_config: inner }, 'mm');
    expect(kvBytesPerToken(shape)).toBe(114_688);
    expect(shape.dtypeAssumed).toBe(true);
  });

  it('estimates a worker\'s KV tokens from fraction, weights and overhead', () => {
    const t = kvTokensFor({ gpuTotalMiB: 8188, fraction: 0.38, weightsMiB: 1136, overheadMiB: overheadMiB(true), bytesPerToken: 114_688 });
    // (8188 x 0.38 - 1136 - 400) MiB / 114,688 B
    expect(t).toBe(Math.floor(((8188 * 0.38 - 1136 - 400) * MIB) / 114_688));
    expect(kvTokensFor({ gpuTotalMiB: 8188, fraction: 0.1, weightsMiB: 1136, overheadMiB: 400, bytesPerToken: 114_688 })).toBe(0);
  });
});

describe('float32 checkpoints', () => {
  it('count 2 bytes per value: vLLM runs them in 16-bit unless --kv-dtype says otherwise', () => {
    const cfg = JSON.parse(readFileSync(join(FIXTURES, 'configs', 'Qwen3-0.6B.config.json'), 'utf8'));
    const shape = kvShapeFromConfig({ ...cfg, torch_dtype: 'float32' }, 'config.json');
    expect(shape.dtypeBytes).toBe(2);
    expect(kvBytesPerToken(shape)).toBe(114_688);
    expect(shape.dtypeNote).toMatch(/config says float32; vLLM runs float32 models in 16-bit/);
    expect(kvShapeFromConfig({ ...cfg, torch_dtype: 'float32' }, 'config.json', { kvDtype: 'float32' }).dtypeBytes).toBe(4);
  });
});
