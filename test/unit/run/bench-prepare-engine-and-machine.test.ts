import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { FIXTURES, tempHomes } from '../../helpers/cli.js';
import { prepareBench, type BenchInput } from '../../../src/run/bench-prepare.js';

// run/bench-prepare.ts, what round 17's Stryker run left undetected: the engine a preset runs on
// (vLLM with a GPU or --device cpu, else the mocker), the machine the document names (the recipe's
// GPU, the driver), recipes of both engines, a --vary value the recipe refuses, AIPerf missing, and
// the model preflight. nvidia-smi is the fake of test/fixtures/bin/gpu (none on PATH: no GPU).

const home = tempHomes('dd-bench-engine-');
const SYSTEM_PATH = process.env.PATH ?? '/usr/bin:/bin';

function input(o: Partial<BenchInput> & { gpu?: string; aiperf?: boolean } = {}): BenchInput {
  const { stateDir } = home();
  const { gpu, aiperf = true, ...rest } = o;
  const dirs = [...(gpu ? [join(FIXTURES, 'bin', 'gpu')] : []), ...(aiperf ? [join(FIXTURES, 'aiperf', 'bin')] : []), SYSTEM_PATH];
  const env = { PATH: dirs.join(delimiter), HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python'), ...(gpu ? { FAKE_NVIDIA_SMI: gpu } : {}) };
  return { env, python: 'python3', stateDir, recipes: [], preflight: false, requests: 8, repeats: 1, ...rest };
}

describe('the engine a preset runs on, and the machine the document names', () => {
  it('a GPU: the preset\'s vLLM recipes; the head names the GPU, its memory and the driver', async () => {
    const p = await prepareBench(input({ preset: 'routing', variants: ['kv-events'], gpu: 'laptop-570' }));
    expect(p.ranEngine).toBe('vllm');
    expect(p.variants[0].recipeObj.engine).toBe('vllm');
    expect(p.header).toContain('(preset routing, vLLM)');
    expect(p.doc.machine).toMatchObject({
      gpu: { index: 0, name: 'NVIDIA GeForce RTX 4060 Laptop GPU', totalMiB: 8188 }, driver: '570.133.07', cudaDriver: '12.8', engine: 'vllm',
    });
  });

  it('no GPU: the mocker, said in the first line; no GPU or driver in the head, no vLLM probed', async () => {
    const p = await prepareBench(input({ preset: 'routing', variants: ['kv-events'] }));
    expect(p.ranEngine).toBe('mocker');
    expect(p.variants[0].recipeObj.engine).toBe('mocker');
    expect(p.header).toContain('(preset routing, mocker engine: no GPU)');
    expect(p.doc.machine).toMatchObject({ gpu: null, driver: null, cudaDriver: null, vllm: null, engine: 'mocker' });
  });

  it('a driver that lists no GPU (nvidia-smi: No devices were found): the mocker too', async () => {
    const p = await prepareBench(input({ preset: 'routing', variants: ['kv-events'], gpu: 'no-devices' }));
    expect(p.ranEngine).toBe('mocker');
    expect(p.doc.machine.gpu).toBeNull();
  });

  it('no GPU with --device cpu: the preset\'s vLLM recipes (vLLM\'s CPU build), not the mocker', async () => {
    const p = await prepareBench(input({ preset: 'routing', variants: ['kv-events'], device: 'cpu' }));
    expect(p.ranEngine).toBe('vllm');
    expect(p.header).toContain('(preset routing, vLLM)');
  });

  it('the GPU the recipe names is the one in the head (two GPUs, gpu=1); the first when the recipe\'s is not listed', async () => {
    const second = await prepareBench(input({ recipes: ['agg'], set: ['gpu=1'], gpu: 'two-gpus-595' }));
    expect(second.doc.machine.gpu).toEqual({ index: 1, name: 'NVIDIA RTX 6000 Ada Generation', totalMiB: 49140 });
    const absent = await prepareBench(input({ recipes: ['agg'], set: ['gpu=3'], gpu: 'two-gpus-595' }));
    expect(absent.doc.machine.gpu).toEqual({ index: 0, name: 'NVIDIA GeForce RTX 4080 SUPER', totalMiB: 16376 });
  });

  it('recipes of both engines: "mixed"', async () => {
    const p = await prepareBench(input({ recipes: ['mocker', 'agg'], gpu: 'laptop-570' }));
    expect(p.ranEngine).toBe('mixed');
    expect(p.doc.machine.engine).toBe('mixed');
    expect(p.header).toMatch(/^bench \S+: 2 variants, concurrency /);
    expect(p.header).not.toContain('preset');
  });
});

describe('refusals before anything is locked', () => {
  it('a --vary value the recipe refuses: named as --vary KEY=VALUES, the value and the recipe\'s reason', async () => {
    const i = input({ recipes: ['mocker'], vary: ['workers.0.replicas=1,many'] });
    await expect(prepareBench(i)).rejects.toThrow('--vary workers.0.replicas=1,many: mocker (built-in): workers.0.replicas: must be number (got "many")');
    expect(existsSync(join(i.stateDir, 'bench.lock'))).toBe(false);
  });

  it('a --vary path the recipe cannot take: the --set wording of the path error becomes --vary\'s', async () => {
    const i = input({ recipes: ['mocker'], vary: ['workers.5.replicas=1,2'] });
    const err = await prepareBench(i).then(() => null, (e: Error) => e);
    expect(err?.message).toBe('--vary workers.5.replicas=1,2: workers has 1 entry; index 5 is past the end (use 0 to 1)');
    expect(existsSync(join(i.stateDir, 'bench.lock'))).toBe(false);
  });

  it('a --set value the recipe refuses stays a --set error (not blamed on --vary)', async () => {
    await expect(prepareBench(input({ recipes: ['mocker'], vary: ['frontend.routerMode=kv,random'], set: ['workers.5.replicas=1'] })))
      .rejects.toThrow(/^--set workers\.5\.replicas=1: workers has 1 entry; index 5 is past the end/);
  });

  it('AIPerf nowhere: one line saying where it was looked for, with the command that installs it', async () => {
    const i = input({ recipes: ['mocker'], aiperf: false });
    // Not the AIPerf environments `dynamo-dev setup` made on this machine: the test's own cache.
    i.env.XDG_CACHE_HOME = join(i.stateDir, 'cache');
    const err = await prepareBench(i).then(() => null, (e: Error & { fix?: string }) => e);
    expect(err?.message).toBe('AIPerf is not installed: no `aiperf` on PATH, no AIPerf environment from setup, and `python3 -m aiperf` has none; bench measures with it');
    expect(err?.fix).toContain('dynamo-dev');
    expect(existsSync(join(i.stateDir, 'bench.lock'))).toBe(false);
  });

  it('with the preflight: a model path that does not exist is refused naming it; --no-preflight lets it through', async () => {
    const missing = '/nonexistent/dd-bench-model';
    const i = input({ recipes: ['agg'], model: missing, preflight: true, gpu: 'laptop-570' });
    await expect(prepareBench(i)).rejects.toThrow(missing);
    expect(existsSync(join(i.stateDir, 'bench.lock'))).toBe(false);
    const p = await prepareBench(input({ recipes: ['agg'], model: missing, preflight: false, gpu: 'laptop-570' }));
    expect(p.variants[0].recipeObj.model).toBe(missing);
  });
});
