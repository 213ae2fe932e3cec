import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHome } from '../helpers/cli.js';

const CONFIGS = join(FIXTURES, 'configs');
const REV = 'c1899de289a04d12100db370d81485cdf75e47ca';

let home: ReturnType<typeof tempHome>;
let env: Record<string, string | undefined>;
beforeEach(() => {
  home = tempHome('dd-e2e-kv-');
  env = fakeEnv(home);
  // The HF cache layout: refs/main -> snapshot with config.json and a weight file linked into blobs/.
  const m = join(home.hfCache, 'models--Qwen--Qwen3-0.6B');
  mkdirSync(join(m, 'refs'), { recursive: true });
  mkdirSync(join(m, 'blobs'), { recursive: true });
  mkdirSync(join(m, 'snapshots', REV), { recursive: true });
  writeFileSync(join(m, 'refs', 'main'), `${REV}\n`);
  copyFileSync(join(CONFIGS, 'Qwen3-0.6B.config.json'), join(m, 'snapshots', REV, 'config.json'));
  writeFileSync(join(m, 'blobs', 'a1b2'), Buffer.alloc(2 * 1024 * 1024));
  symlinkSync(join('..', '..', 'blobs', 'a1b2'), join(m, 'snapshots', REV, 'model.safetensors'));
});
afterEach(() => home.cleanup());

describe('dynamo-dev kv', () => {
  it('Qwen/Qwen3-0.6B from the HF cache: 114,688 bytes per token', async () => {
    const r = await runCli(['kv', 'Qwen/Qwen3-0.6B'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('114,688');
    expect(r.stdout).toContain('layers 28, KV heads 8, head_dim 128, bfloat16 (2 bytes), MLA no');
    expect(r.stdout).toContain('tokens per GiB   9,362');
    expect(r.stdout).toContain(join(home.hfCache, 'models--Qwen--Qwen3-0.6B', 'snapshots', REV, 'config.json'));
  });

  it('--tokens 1500 --bandwidth 608: about 164 MiB and 283 ms', async () => {
    const r = await runCli(['kv', 'Qwen/Qwen3-0.6B', '--tokens', '1500', '--bandwidth', '608'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1,500 tokens = 172,032,000 bytes = 164.1 MiB');
    expect(r.stdout).toContain('at 608 MB/s (1 MB = 10^6 bytes) = 283 ms');
  });

  it('--json: one document with every number', async () => {
    const r = await runCli(['kv', 'Qwen/Qwen3-0.6B', '--tokens', '1500', '--bandwidth', '608', '--gpu-mib', '8188', '--fraction', '0.38', '--json'], env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(['model', 'configPath', 'shape', 'tp', 'bytesPerToken', 'tokensPerGiB', 'worker', 'request', 'transfer']);
    expect(doc).toMatchObject({ model: 'Qwen/Qwen3-0.6B', tp: 1, bytesPerToken: 114688, tokensPerGiB: 9362 });
    expect(doc.shape).toMatchObject({ layers: 28, kvHeads: 8, kvHeadsPerGpu: 8, headDim: 128, dtype: 'bfloat16', dtypeBytes: 2, mla: false });
    expect(doc.worker).toMatchObject({ gpuMiB: 8188, fraction: 0.38, weightsMiB: 2, weightsSource: 'files', overheadMiB: 400, maxModelLen: 4096 });
    expect(doc.worker.kvTokens).toBe(Math.floor(((8188 * 0.38 - 2 - 400) * 1024 * 1024) / 114688));
    expect(doc.request).toEqual({ tokens: 1500, bytes: 172032000, mib: 164.1 });
    expect(doc.transfer).toEqual({ bandwidthMBps: 608, tokens: 1500, bytes: 172032000, ms: 282.9 });
  });

  it('an MLA config and --tp 2', async () => {
    const mla = await runCli(['kv', join(CONFIGS, 'DeepSeek-V2-Lite.config.json'), '--json'], env);
    expect(mla.code).toBe(0);
    expect(JSON.parse(mla.stdout)).toMatchObject({ bytesPerToken: 31104, shape: { mla: true, headDim: 576, kvLoraRank: 512, qkRopeHeadDim: 64 } });
    const tp = await runCli(['kv', 'Qwen/Qwen3-0.6B', '--tp', '2'], env);
    expect(tp.stdout).toContain('KV heads 8 (4 per GPU at tp 2)');
    expect(tp.stdout).toContain('57,344');
    const llama = await runCli(['kv', join(CONFIGS, 'TinyLlama-1.1B-Chat-v1.0.config.json'), '--json'], env);
    expect(JSON.parse(llama.stdout).bytesPerToken).toBe(22528);
  });

  it('a config without the needed fields: exit 2 naming the field', async () => {
    const r = await runCli(['kv', join(CONFIGS, 'missing-layers.config.json')], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('missing field "num_hidden_layers"');
  });

  it('a model not in the cache: exit 2 naming the searched path and the hf download command', async () => {
    const r = await runCli(['kv', 'meta-llama/Llama-3.2-1B'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(join(home.hfCache, 'models--meta-llama--Llama-3.2-1B'));
    expect(r.stderr).toContain('hf download meta-llama/Llama-3.2-1B');
  });

  it('bad worker options: exit 2 naming the flag', async () => {
    const r = await runCli(['kv', 'Qwen/Qwen3-0.6B', '--gpu-mib', '8188'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--fraction: needed with --gpu-mib');
  });

  it('--fraction without --gpu-mib takes the GPU total from nvidia-smi; without an answer it asks for --gpu-mib', async () => {
    const withGpu = fakeEnv(home, { gpu: 'laptop-570' });
    const r = await runCli(['kv', 'Qwen/Qwen3-0.6B', '--fraction', '0.38', '--json'], withGpu);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).worker).toMatchObject({ gpuMiB: 8188, fraction: 0.38 });
    const none = await runCli(['kv', 'Qwen/Qwen3-0.6B', '--fraction', '0.38'], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--gpu-mib: needed with --fraction here \(nvidia-smi gave no GPU memory total\)/);
  });

  it('0 MiB of weights is no model: exit 2 instead of an exact-looking estimate', async () => {
    const r = await runCli(['kv', 'Qwen/Qwen3-0.6B', '--gpu-mib', '8188', '--fraction', '0.38', '--weights-mib', '0'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--weights-mib: 0 MiB of weights is not a model');
  });
});
