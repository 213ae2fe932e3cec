import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/cuda.compat.js';
import type { CompatFacts, GpuFacts, PythonFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';

const base = healthyGpu.ok ? healthyGpu.gpus[0] : ({} as never);
const gpuOf = (name: string, driverVersion: string, cudaVersion: string): GpuFacts => ({
  ok: true, driverVersion, cudaVersion, gpus: [{ ...base, name, driverVersion }],
});
const laptop570 = gpuOf('NVIDIA GeForce RTX 4060 Laptop GPU', '570.133.07', '12.8');
const desktop595 = gpuOf('NVIDIA GeForce RTX 4080 SUPER', '595.71.05', '13.2');
const h100on570 = gpuOf('NVIDIA H100 80GB HBM3', '570.133.07', '12.8');
const ada = gpuOf('NVIDIA RTX 6000 Ada Generation', '570.133.07', '12.8');

const torchBuild = (cuda: string | null): PythonFacts => ({
  interpreter: 'python3', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: cuda,
  modules: {
    dynamo: { ok: true, version: '1.0.0', error: null },
    vllm: { ok: true, version: '0.11.0', error: null },
    torch: { ok: true, version: cuda ? `2.8.0+cu${cuda.replace('.', '')}` : '2.8.0+cpu', error: null },
  },
});
const noCompat: CompatFacts = { ldLibraryPathCompat: [], ldconfigCompat: [], ldconfigLibcuda: ['/lib/x86_64-linux-gnu/libcuda.so.1'], ldconfigError: null };

describe('cuda.compat: the build against the driver', () => {
  it('passes a cu128 build on a 12.8 driver', async () => {
    const r = await check.run(fakeFacts({ gpu: laptop570, python: torchBuild('12.8') }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('torch CUDA 12.8 <= driver CUDA 12.8 (driver 570.133.07); no forward-compat libraries on the load path');
  });

  it('passes a cu129 build on driver 595 (CUDA 13.2)', async () => {
    expect((await check.run(fakeFacts({ gpu: desktop595, python: torchBuild('12.9') }))).status).toBe('pass');
  });

  it('fails 12.9 on a 12.8 driver (the real Error 804 case), naming both versions, 804 and the driver (no release has a CUDA 12.8 vLLM build)', async () => {
    const r = await check.run(fakeFacts({ gpu: laptop570, python: torchBuild('12.9') }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('CUDA 12.9');
    expect(r.summary).toContain('supports CUDA 12.8');
    expect(r.summary).toContain('Error 804');
    expect(r.fix).toContain('>= 575.51.03');
    expect(r.fix).toBe('install an NVIDIA driver >= 575.51.03 (CUDA 12.9)');
    expect(r.details).toContain('python3: torch 2.8.0+cu129, torch.version.cuda 12.9');
  });

  it('only warns for a newer minor on a data-center GPU, where forward compatibility is supported', async () => {
    const r = await check.run(fakeFacts({ gpu: h100on570, python: torchBuild('12.9') }));
    expect(r.status).toBe('warn');
    expect(r.summary).toContain('reduced features');
    expect(r.fix).toContain('575.51.03');
  });

  it('fails a CUDA 13 build on a 12.x driver, even on a data-center GPU', async () => {
    const r = await check.run(fakeFacts({ gpu: h100on570, python: torchBuild('13.0') }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('CUDA 13.x build never runs on a CUDA 12.x driver');
    expect(r.fix).toContain('580.65.06');
  });

  it('warns about a CPU torch build, and skips when torch or Python cannot be asked', async () => {
    const cpu = await check.run(fakeFacts({ gpu: laptop570, python: torchBuild(null) }));
    expect(cpu.status).toBe('warn');
    expect(cpu.summary).toContain('CPU build');
    const noTorch = torchBuild('12.8');
    noTorch.modules.torch = { ok: false, version: null, error: "ModuleNotFoundError: No module named 'torch'" };
    const r = await check.run(fakeFacts({ gpu: laptop570, python: { ...noTorch, torchCuda: null } }));
    expect(r.status).toBe('skip');
    expect(r.summary).toContain('see python.env');
    const dead = await check.run(fakeFacts({ gpu: laptop570, python: { ...torchBuild(null), ok: false, error: 'not found (ENOENT)', modules: {} } }));
    expect(dead.status).toBe('skip');
  });
});

describe('cuda.compat: forward-compat libraries', () => {
  it('fails with Error 804 when LD_LIBRARY_PATH has a compat dir on a laptop GPU, with a cleaned LD_LIBRARY_PATH in the fix', async () => {
    const compat: CompatFacts = { ...noCompat, ldLibraryPathCompat: ['/usr/local/cuda/compat'] };
    const r = await check.run(fakeFacts({ gpu: laptop570, python: torchBuild('12.8'), compat }, { env: { LD_LIBRARY_PATH: '/usr/local/cuda/lib64:/usr/local/cuda/compat' } }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('Error 804: forward compatibility was attempted on non supported HW');
    expect(r.details).toEqual(['LD_LIBRARY_PATH contains /usr/local/cuda/compat']);
    expect(r.fix).toContain('export LD_LIBRARY_PATH=/usr/local/cuda/lib64');
    expect(r.fix).toContain('VLLM_ENABLE_CUDA_COMPATIBILITY=0');
  });

  it('fails for a cuda-compat package in ld.so.cache, naming the package to remove', async () => {
    const compat: CompatFacts = {
      ldLibraryPathCompat: [], ldconfigError: null,
      ldconfigCompat: ['/usr/local/cuda-12.9/compat/libcuda.so.1'],
      ldconfigLibcuda: ['/usr/local/cuda-12.9/compat/libcuda.so.1', '/lib/x86_64-linux-gnu/libcuda.so.1'],
    };
    const r = await check.run(fakeFacts({ gpu: desktop595, python: torchBuild('12.8'), compat }));
    expect(r.status).toBe('fail');
    expect(r.details).toEqual(['ld.so.cache (ldconfig -p) has /usr/local/cuda-12.9/compat/libcuda.so.1']);
    expect(r.fix).toContain('sudo apt remove cuda-compat-12-9');
  });

  it('accepts compat libraries on a data-center GPU and warns on a professional RTX card', async () => {
    const compat: CompatFacts = { ...noCompat, ldLibraryPathCompat: ['/usr/local/cuda-12.9/compat'] };
    expect((await check.run(fakeFacts({ gpu: h100on570, python: torchBuild('12.8'), compat }))).status).toBe('pass');
    expect((await check.run(fakeFacts({ gpu: ada, python: torchBuild('12.8'), compat }))).status).toBe('warn');
  });

  it('reports both problems when compat libs and a too-new build meet', async () => {
    const compat: CompatFacts = { ...noCompat, ldLibraryPathCompat: ['/usr/local/cuda/compat'] };
    const r = await check.run(fakeFacts({ gpu: laptop570, python: torchBuild('12.9'), compat }, { env: { LD_LIBRARY_PATH: '/usr/local/cuda/compat' } }));
    expect(r.status).toBe('fail');
    expect(r.fix).toContain('unset LD_LIBRARY_PATH');
    expect(r.fix).toContain('575.51.03');
    expect(r.details.some((d) => d.includes('torch is built for CUDA 12.9'))).toBe(true);
  });

  it('warns when ld.so.cache has two libcuda.so.1 on a GeForce even outside a compat dir', async () => {
    const compat: CompatFacts = { ...noCompat, ldconfigLibcuda: ['/opt/cuda-fc/libcuda.so.1', '/lib/x86_64-linux-gnu/libcuda.so.1'] };
    expect((await check.run(fakeFacts({ gpu: laptop570, python: torchBuild('12.8'), compat }))).status).toBe('warn');
  });
});

describe('cuda.compat: driver state', () => {
  it('fails on Driver/library version mismatch with a reboot fix', async () => {
    const r = await check.run(fakeFacts({ gpu: { ok: false, reason: 'mismatch', message: 'Failed to initialize NVML: Driver/library version mismatch' } }));
    expect(r.status).toBe('fail');
    expect(r.fix).toContain('reboot or reload the nvidia kernel module');
  });
  it("judges the recipe's GPU only: skips when its index is not listed instead of judging GPU 0", async () => {
    // GPU 0 is a data-center card that accepts compat libs; the recipe asks for GPU 1, which is absent.
    const recipe = recipeFrom({ gpu: 1 });
    const r = await check.run(fakeFacts(
      { gpu: h100on570, python: torchBuild('12.8'), compat: { ...noCompat, ldLibraryPathCompat: ['/usr/local/cuda/compat'] } },
      { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x', gpuTotalMiB: 8188 }) },
    ));
    expect(r.status).toBe('skip');
    expect(r.summary).toBe("the recipe's GPU 1 is not listed by nvidia-smi: see gpu.driver");
  });

  it('does not vouch for ld.so.cache when ldconfig could not be read', async () => {
    const r = await check.run(fakeFacts({ gpu: laptop570, python: torchBuild('12.8'), compat: { ...noCompat, ldconfigLibcuda: [], ldconfigError: 'ldconfig not found on PATH or in /sbin' } }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('no forward-compat libraries on LD_LIBRARY_PATH (ld.so.cache not read: ldconfig not found on PATH or in /sbin)');
  });

  it('skips without GPU facts, and for the mocker engine', async () => {
    expect((await check.run(fakeFacts({ gpu: { ok: false, reason: 'not-installed', message: 'x' } }))).summary).toBe('no GPU facts: see gpu.driver');
    const recipe = recipeFrom({ engine: 'mocker' });
    expect((await check.run(fakeFacts({}, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) }))).status).toBe('skip');
  });
});
