import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/gpu.driver.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';
import type { GpuFacts } from '../../../src/host/types.js';

const twoGpus: GpuFacts = {
  ok: true, driverVersion: '595.71.05', cudaVersion: '13.2',
  gpus: [
    { ...(healthyGpu.ok ? healthyGpu.gpus[0] : ({} as never)), index: 0, name: 'NVIDIA GeForce RTX 4080 SUPER', memoryTotalMiB: 16376 },
    { ...(healthyGpu.ok ? healthyGpu.gpus[0] : ({} as never)), index: 1, name: 'NVIDIA RTX 6000 Ada Generation', memoryTotalMiB: 49140 },
  ],
};

describe('gpu.driver', () => {
  it('passes with the GPU, driver and CUDA version as evidence', async () => {
    const r = await check.run(fakeFacts());
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('NVIDIA GeForce RTX 4060 Laptop GPU (GPU 0), driver 570.133.07, CUDA 12.8');
    expect(r.evidence).toEqual({
      gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4060 Laptop GPU', memoryTotalMiB: 8188, class: 'consumer' }],
      driverVersion: '570.133.07', cudaVersion: '12.8',
    });
    expect(r.details).toContain('GPU 0: NVIDIA GeForce RTX 4060 Laptop GPU, 8188 MiB');
  });

  it('fails with the not-found message and an install fix when nvidia-smi is missing', async () => {
    const r = await check.run(fakeFacts({ gpu: { ok: false, reason: 'not-installed', message: 'nvidia-smi not found: the NVIDIA driver is not installed (or not on PATH)' } }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('nvidia-smi not found: the NVIDIA driver is not installed (or not on PATH)');
    expect(r.fix).toMatch(/install the NVIDIA driver/);
  });

  it('fails on a driver/library mismatch with a reboot fix', async () => {
    const r = await check.run(fakeFacts({ gpu: { ok: false, reason: 'mismatch', message: 'Failed to initialize NVML: Driver/library version mismatch' } }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('Driver/library version mismatch');
    expect(r.fix).toContain('reboot or reload the nvidia kernel module');
  });

  it('fails when the driver does not answer or no GPU is found', async () => {
    const noDriver = await check.run(fakeFacts({ gpu: { ok: false, reason: 'no-driver', message: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." } }));
    expect(noDriver.status).toBe('fail');
    expect(noDriver.fix).toContain('modprobe nvidia');
    const none = await check.run(fakeFacts({ gpu: { ok: false, reason: 'no-devices', message: 'No devices were found' } }));
    expect(none.status).toBe('fail');
  });

  it("fails when the recipe's GPU index is not listed, naming the GPUs there are", async () => {
    const recipe = recipeFrom({ gpu: 2 });
    const r = await check.run(fakeFacts({ gpu: twoGpus }, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe("the recipe's GPU 2 is not listed by nvidia-smi (it lists 0, 1)");
    expect(r.fix).toContain('gpu: 0');
  });

  it('passes for the second GPU when the recipe asks for it', async () => {
    const recipe = recipeFrom({ gpu: 1 });
    const r = await check.run(fakeFacts({ gpu: twoGpus }, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('NVIDIA RTX 6000 Ada Generation (GPU 1)');
  });

  it('warns when the driver CUDA version cannot be read', async () => {
    const r = await check.run(fakeFacts({ gpu: { ...healthyGpu, cudaVersion: null } as GpuFacts }));
    expect(r.status).toBe('warn');
  });

  it('skips a missing GPU for the mocker engine, which needs none', async () => {
    const recipe = recipeFrom({ engine: 'mocker' });
    const r = await check.run(fakeFacts({ gpu: { ok: false, reason: 'not-installed', message: 'x' } }, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) }));
    expect(r.status).toBe('skip');
  });
});
