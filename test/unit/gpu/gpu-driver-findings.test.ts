import { describe, expect, it } from 'vitest';
import check, { CPU_ENGINE_HERE, describeGpu, MOCKER_HERE } from '../../../src/doctor/checks/gpu.driver.js';
import type { GpuFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';

// gpu.driver as the user reads it: every failure names what nvidia-smi said and one way out.
const NOT_FOUND = 'nvidia-smi not found: the NVIDIA driver is not installed (or not on PATH)';
const gpu0 = healthyGpu.ok ? healthyGpu.gpus[0] : ({} as never);
const mockerFacts = (values: Parameters<typeof fakeFacts>[0]) => {
  const recipe = recipeFrom({ engine: 'mocker' });
  return fakeFacts(values, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) });
};

describe('gpu.driver: nvidia-smi fails', () => {
  it('a missing nvidia-smi prints its message, what runs here without a GPU (the mocker, and how) and the install fix, no echo of it as a detail', async () => {
    const r = await check.run(fakeFacts({ gpu: { ok: false, reason: 'not-installed', message: NOT_FOUND } }));
    expect(r).toEqual({
      status: 'fail',
      summary: NOT_FOUND,
      details: [
        'without a GPU, the mocker (Dynamo\'s simulated workers, ready in seconds, ~0.7 GB install): `dynamo-dev setup` then `dynamo-dev up mocker`',
        'or the CPU engine (real vLLM workers, ~2 min to ready, ~6.2 GB install): `dynamo-dev setup --device cpu` then `dynamo-dev up agg-router --device cpu` (docs/cpu.md)',
      ],
      fix: 'install the NVIDIA driver (e.g. `sudo ubuntu-drivers install`, then reboot) or add the directory holding nvidia-smi to PATH',
      evidence: { reason: 'not-installed', message: NOT_FOUND },
    });
  });

  it('a driver that does not answer quotes nvidia-smi and says how to load the module', async () => {
    const message = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.";
    const r = await check.run(fakeFacts({ gpu: { ok: false, reason: 'no-driver', message } }));
    expect(r).toEqual({
      status: 'fail',
      summary: `nvidia-smi failed: ${message}`,
      details: [`nvidia-smi: ${message}`, MOCKER_HERE, CPU_ENGINE_HERE],
      fix: 'load the NVIDIA kernel module (`sudo modprobe nvidia`) or reinstall the driver and reboot; check `dmesg | grep -i nvidia`',
      evidence: { reason: 'no-driver', message },
    });
  });

  it('no devices points at lspci and --gpus all; any other error at running nvidia-smi by hand', async () => {
    const none = await check.run(fakeFacts({ gpu: { ok: false, reason: 'no-devices', message: 'No devices were found' } }));
    expect(none.fix).toBe('check that the GPU is visible (`lspci | grep -i nvidia`) and, in a container, that it was started with `--gpus all`');
    const other = await check.run(fakeFacts({ gpu: { ok: false, reason: 'error', message: 'Unknown Error' } }));
    expect(other).toMatchObject({ status: 'fail', summary: 'nvidia-smi failed: Unknown Error', fix: 'run `nvidia-smi` by hand to see the error' });
  });

  it('the mocker engine skips a missing GPU, still saying what nvidia-smi said', async () => {
    const r = await check.run(mockerFacts({ gpu: { ok: false, reason: 'no-driver', message: 'x' } }));
    expect(r).toEqual({
      status: 'skip',
      summary: 'no GPU, which the mocker engine does not need (nvidia-smi failed: x)',
      details: [],
      fix: null,
      evidence: { reason: 'no-driver', message: 'x' },
    });
  });
});

describe("gpu.driver: the recipe's GPU", () => {
  it('the pass lists every GPU and the driver line under it', async () => {
    const r = await check.run(fakeFacts());
    expect(r.details).toEqual(['GPU 0: NVIDIA GeForce RTX 4060 Laptop GPU, 8188 MiB', 'driver 570.133.07, supports CUDA up to 12.8']);
  });

  it('a unified-memory GPU is described as such, not as 0 MiB', () => {
    expect(describeGpu({ ...gpu0, name: 'NVIDIA GB10', memoryTotalMiB: null })).toBe('GPU 0: NVIDIA GB10, memory [N/A] (unified memory)');
    expect(describeGpu({ ...gpu0, memoryTotalMiB: 0 })).toBe('GPU 0: NVIDIA GeForce RTX 4060 Laptop GPU, 0 MiB');
  });

  it('an unlisted index for the mocker is a skip with the same line, not a fail', async () => {
    const recipe = recipeFrom({ engine: 'mocker', gpu: 2 });
    const r = await check.run(fakeFacts({}, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) }));
    expect(r).toMatchObject({ status: 'skip', summary: "the recipe's GPU 2 is not listed by nvidia-smi (it lists 0)", fix: null });
    expect(r.evidence).toMatchObject({ driverVersion: '570.133.07', cudaVersion: '12.8' });
  });

  it('an unlisted index fails with the GPU lines and the driver line as evidence', async () => {
    const recipe = recipeFrom({ gpu: 1 });
    const r = await check.run(fakeFacts({}, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: "the recipe's GPU 1 is not listed by nvidia-smi (it lists 0)",
      fix: 'set `gpu: 0` in the recipe (GPUs here: 0)',
      details: ['GPU 0: NVIDIA GeForce RTX 4060 Laptop GPU, 8188 MiB', 'driver 570.133.07, supports CUDA up to 12.8'],
    });
  });

  it('an unreadable CUDA version warns, naming what cuda.compat then cannot judge and where to read it', async () => {
    const gpu = { ...healthyGpu, cudaVersion: null } as GpuFacts;
    const r = await check.run(fakeFacts({ gpu }));
    expect(r).toEqual({
      status: 'warn',
      summary: 'NVIDIA GeForce RTX 4060 Laptop GPU (GPU 0), driver 570.133.07, CUDA unknown: the driver\'s CUDA version could not be read, so cuda.compat cannot judge the build',
      details: ['GPU 0: NVIDIA GeForce RTX 4060 Laptop GPU, 8188 MiB', 'driver 570.133.07, supports CUDA up to unknown'],
      fix: 'run `nvidia-smi` and read "CUDA Version" in its header',
      evidence: {
        gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4060 Laptop GPU', memoryTotalMiB: 8188, class: 'consumer' }],
        driverVersion: '570.133.07',
        cudaVersion: null,
      },
    });
  });

  it('an unknown driver version reads "unknown", never "null"', async () => {
    const gpu = { ...healthyGpu, driverVersion: null } as GpuFacts;
    const r = await check.run(fakeFacts({ gpu }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('NVIDIA GeForce RTX 4060 Laptop GPU (GPU 0), driver unknown, CUDA 12.8');
    expect(r.details).toContain('driver unknown, supports CUDA up to 12.8');
  });
});
