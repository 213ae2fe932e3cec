import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildKvReport, type KvOptions } from '../../../src/plan/kv-report.js';
import { FIXTURES } from '../../helpers/cli.js';

// `dynamo-dev kv`: the worker estimate at its edges, and the shape it reports for the model kinds.
const config = (name: string) => JSON.parse(readFileSync(join(FIXTURES, 'configs', `${name}.config.json`), 'utf8')) as Record<string, unknown>;
const report = (opts: KvOptions, weightsMiB: number | null = 1433, cfg = 'Qwen3-0.6B') =>
  buildKvReport({ model: 'm', configPath: '/c/config.json', config: config(cfg), weightsMiB, opts });

describe('kv: the worker estimate', () => {
  it('the whole worker: what it asks for, weights, overhead, KV memory, tokens and requests of max length', () => {
    // 8000 x 0.5 = 4000 MiB - 3152 weights - 400 overhead = 448 MiB = 4,096 tokens of 114,688 bytes.
    expect(report({ gpuMib: 8000, fraction: 0.5, weightsMib: 3152, maxModelLen: 2048 }).worker).toEqual({
      gpuMiB: 8000, fraction: 0.5, requestedMiB: 4000, weightsMiB: 3152, weightsSource: 'flag', overheadMiB: 400,
      kvMiB: 448, kvTokens: 4096, maxModelLen: 2048, requestsThatFit: 2,
    });
  });

  it('without --max-model-len, requests of 4,096 tokens', () => {
    expect(report({ gpuMib: 8000, fraction: 0.5, weightsMib: 3152 }).worker).toMatchObject({ maxModelLen: 4096, requestsThatFit: 1 });
  });

  it('weights larger than the fraction: 0 MiB and 0 tokens of KV, never a negative amount', () => {
    expect(report({ gpuMib: 8000, fraction: 0.2, weightsMib: 3152 }).worker).toMatchObject({ requestedMiB: 1600, kvMiB: 0, kvTokens: 0, requestsThatFit: 0 });
  });

  it('a fraction of exactly 1 is the whole GPU; 0 and negative are not fractions', () => {
    expect(report({ gpuMib: 8000, fraction: 1, weightsMib: 3152 }).worker).toMatchObject({ requestedMiB: 8000, kvMiB: 4448 });
    expect(() => report({ gpuMib: 8000, fraction: 0 })).toThrow('--fraction: 0 is not a fraction; use a number in (0, 1], e.g. 0.38');
    expect(() => report({ gpuMib: 8000, fraction: -0.5 })).toThrow('--fraction: -0.5 is not a fraction');
    expect(() => report({ gpuMib: 8000, fraction: 1.01 })).toThrow('--fraction: 1.01 is not a fraction');
  });

  it('--weights-mib with only one of --gpu-mib and --fraction asks for the other one', () => {
    expect(() => report({ gpuMib: 8000, weightsMib: 1000 })).toThrow(/^--fraction: needed with --gpu-mib/);
    expect(() => report({ fraction: 0.4, weightsMib: 1000 })).toThrow(/^--gpu-mib: needed with --fraction/);
  });

  it('0 MiB of weights is no model: from the flag, or from files not downloaded yet', () => {
    expect(() => report({ gpuMib: 8000, fraction: 0.5, weightsMib: 0 })).toThrow(
      '--weights-mib: 0 MiB of weights is not a model; pass the size of its weight files in MiB, e.g. 1144',
    );
    expect(() => report({ gpuMib: 8000, fraction: 0.5 }, 0)).toThrow(
      '--weights-mib: the weight files beside /c/config.json add up to 0 MiB (not downloaded yet?); pass --weights-mib N',
    );
  });

  it('--weights-mib wins over the weight files found', () => {
    expect(report({ gpuMib: 8000, fraction: 0.5, weightsMib: 3152 }, 1433).worker).toMatchObject({ weightsMiB: 3152, weightsSource: 'flag' });
  });
});

describe('kv: the shape it reports', () => {
  it('a dense model with its dtype from the config: nothing assumed, no MLA fields', () => {
    expect(report({}).shape).toEqual({ layers: 28, kvHeads: 8, kvHeadsPerGpu: 8, headDim: 128, dtype: 'bfloat16', dtypeBytes: 2, dtypeAssumed: false, mla: false });
  });

  it('MLA: the latent rank and the rope dimension are reported', () => {
    expect(report({}, null, 'DeepSeek-V2-Lite').shape).toMatchObject({ mla: true, kvHeads: 1, kvHeadsPerGpu: 1, headDim: 576, kvLoraRank: 512, qkRopeHeadDim: 64 });
  });

  it('a float32 checkpoint says why its KV cache counts 2 bytes per value', () => {
    const cfg = { ...config('Qwen3-0.6B'), torch_dtype: 'float32' };
    const r = buildKvReport({ model: 'm', configPath: '/c/config.json', config: cfg, weightsMiB: null, opts: {} });
    expect(r.shape).toMatchObject({ dtype: 'bfloat16', dtypeBytes: 2, dtypeNote: 'config says float32; vLLM runs float32 models in 16-bit (--dtype auto)' });
  });

  it('--kv-dtype fp8 halves the bytes per token', () => {
    const r = report({ kvDtype: 'fp8' });
    expect(r.shape).toMatchObject({ dtype: 'fp8', dtypeBytes: 1 });
    expect(r.bytesPerToken).toBe(57_344);
  });
});
