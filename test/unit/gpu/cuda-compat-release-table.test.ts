import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/cuda.compat.js';
import type { GpuFacts, PythonFacts } from '../../../src/host/types.js';
import { TOOLKIT_DRIVER_MIN } from '../../../src/plan/cuda-rules.js';
import { cudaForDriver, whyNot } from '../../../src/plan/choose-release.js';
import { BUILDS, buildOf } from '../../../src/plan/dynamo-releases.js';
import { fakeFacts, healthyGpu } from '../../helpers/facts.js';

// cuda.compat's fixes read the release table (issue 24): a fix names only builds that exist for a
// release (`ai-dynamo[vllm]==X`, whose pins bring its vLLM and torch), never a CUDA wheel tag that
// the release's vLLM is not built for; a GPU older than the installed build fails with its compute
// capability and the newest release that still supports it.

const gpuOf = (name: string, driverVersion: string, cudaVersion: string | null, computeCap: string): GpuFacts => ({
  ok: true, driverVersion, cudaVersion,
  gpus: [{ ...(healthyGpu.ok ? healthyGpu.gpus[0] : ({} as never)), name, driverVersion, computeCap }],
});
const installed = (release: string, torchCuda: string | null = buildOf(release)!.torchCuda): PythonFacts => {
  const b = buildOf(release)!;
  return {
    interpreter: '/home/u/venv/bin/python', ok: true, error: null, pythonVersion: '3.12.3', torchCuda,
    modules: {
      dynamo: { ok: true, version: release, error: null },
      vllm: { ok: true, version: b.vllm, error: null },
      torch: { ok: true, version: torchCuda ? `${b.torch}+cu${torchCuda.replace('.', '')}` : `${b.torch}+cpu`, error: null },
    },
  };
};

describe('cuda.compat: fixes from the release table', () => {
  it('1.6.1 (vLLM 0.31, CUDA 13) on driver 570: the driver alone; no CUDA 12 wheel is offered, none exists', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf('NVIDIA GeForce RTX 4060 Laptop GPU', '570.133.07', '12.8', '8.9'), python: installed('1.6.1') }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('torch is built for CUDA 13.0 (2.13.0+cu130) but driver 570.133.07 supports CUDA 12.8');
    expect(r.fix).toBe('install an NVIDIA driver >= 580.65.06 (CUDA 13.0)');
  });

  it('1.6.1 on driver 575 (CUDA 12.9): the driver, or 1.1.1, the newest release built for CUDA 12.9', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf('NVIDIA GeForce RTX 3090', '575.64.05', '12.9', '8.6'), python: installed('1.6.1') }));
    expect(r.status).toBe('fail');
    expect(r.fix).toBe('install an NVIDIA driver >= 580.65.06 (CUDA 13.0), or install ai-dynamo 1.1.1, the newest release whose build runs on this driver and GPU (vLLM 0.19.0, torch 2.10.0, CUDA 12.9): `/home/u/venv/bin/python -m pip install "ai-dynamo[vllm]==1.1.1"`');
  });

  it('a V100 (compute capability 7.0) under 1.6.1 fails with its compute capability and the release that still supports it', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf('Tesla V100-SXM2-16GB', '580.82.07', '13.0', '7.0'), python: installed('1.6.1') }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'Tesla V100-SXM2-16GB has compute capability 7.0, older than the installed build: ai-dynamo 1.6.1\'s torch 2.13.0 and vLLM 0.31.0 have kernels for sm_75..sm_121 only (CUDA error: no kernel image is available for execution on the device)',
      fix: 'install ai-dynamo 1.1.1, the newest release whose build runs on this driver and GPU (vLLM 0.19.0, torch 2.10.0, CUDA 12.9): `/home/u/venv/bin/python -m pip install "ai-dynamo[vllm]==1.1.1"`',
    });
    expect(r.evidence).toMatchObject({ computeCapability: '7.0', dynamoVersion: '1.6.1' });
  });

  it('a Pascal GPU (6.1): no release supports it, said as the fix', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf('NVIDIA GeForce GTX 1080', '580.82.07', '13.0', '6.1'), python: installed('1.6.1') }));
    expect(r.status).toBe('fail');
    expect(r.fix).toBe('no ai-dynamo release has a vLLM build for this machine (no build has kernels for compute capability 6.1 (the oldest GPUs any supports: sm_70..sm_120, ai-dynamo 1.1.1 and older)): a GPU of compute capability 7.0 or newer (this one is 6.1)');
  });

  it('a CPU torch under 1.6.1 on driver 580: reinstall the release\'s own build', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf('NVIDIA GeForce RTX 4090', '580.82.07', '13.0', '8.9'), python: installed('1.6.1', null) }));
    expect(r.status).toBe('warn');
    expect(r.fix).toBe('reinstall ai-dynamo 1.6.1\'s own build (vLLM 0.31.0, torch 2.13.0, CUDA 13.0): `/home/u/venv/bin/python -m pip install --force-reinstall "ai-dynamo[vllm]==1.6.1"`');
  });

  it('the build of the installed release runs on this GPU: no compute-capability finding', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf('Tesla V100-SXM2-16GB', '580.82.07', '13.0', '7.0'), python: installed('1.1.1') }));
    expect(r.status).toBe('pass');
  });
});

describe('every fix cuda.compat can produce names only builds that exist and run there', () => {
  const DRIVERS = ['535.288.01', '550.163.01', '570.195.03', '575.64.05', '580.65.06', '595.45.04'];
  const CCS = ['6.1', '7.0', '7.5', '8.6', '8.9', '9.0', '12.0'];
  const GPUS = ['NVIDIA GeForce RTX 4090', 'NVIDIA H100 80GB HBM3'];
  const releases = [...new Set(BUILDS.map((b) => b.release))];
  const torchCudas = [null, '12.8', '12.9', '13.0'];

  it('drivers x compute capabilities x installed releases x torch builds x GPU classes', async () => {
    let fixes = 0;
    for (const driver of DRIVERS) for (const cc of CCS) for (const gpu of GPUS) for (const release of releases) for (const tc of torchCudas) {
      const r = await check.run(fakeFacts({ gpu: gpuOf(gpu, driver, cudaForDriver(driver), cc), python: installed(release, tc) }));
      if (r.fix === null) continue;
      fixes++;
      const where = `${driver} ${cc} ${gpu} ${release} torch CUDA ${tc}: ${r.fix}`;
      expect(r.fix, where).not.toMatch(/torch-backend|\bcu1\d\d\b|download\.pytorch/);
      for (const m of r.fix.matchAll(/ai-dynamo\[vllm\]==([^"`\s]+)/g)) {
        const b = buildOf(m[1]);
        expect(b?.release, where).toBe(m[1]);
        expect(whyNot(b!, { driver, cuda: cudaForDriver(driver), cc, python: '3.12.3' }), where).toBeNull();
      }
      // Driver versions are NVIDIA's own minimums (cuda-rules.ts TOOLKIT_DRIVER_MIN).
      for (const m of r.fix.matchAll(/driver >= ([\d.]+)/g)) expect(Object.values(TOOLKIT_DRIVER_MIN), where).toContain(m[1]);
    }
    expect(fixes).toBeGreaterThan(1000);
  });
});
