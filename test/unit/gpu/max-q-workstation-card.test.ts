import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/cuda.compat.js';
import { gpuClass } from '../../../src/plan/gpu-class.js';
import type { CompatFacts, GpuFacts, PythonFacts } from '../../../src/host/types.js';
import { fakeFacts, healthyGpu } from '../../helpers/facts.js';

// "Max-Q" names NVIDIA's power-limited laptop parts ("... with Max-Q Design") and also a desktop
// workstation card, the 300 W "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition" (its
// nvidia-smi name; also in the supported-GPU table of NVIDIA's driver README). That card is a
// professional one: doctor must not call it a GeForce/laptop GPU that refuses forward compatibility.
const MAXQ_WORKSTATION = 'NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition';

const gpuOf = (name: string): GpuFacts => ({
  ok: true, driverVersion: '570.133.07', cudaVersion: '12.8',
  gpus: [{ ...(healthyGpu.ok ? healthyGpu.gpus[0] : ({} as never)), name, driverVersion: '570.133.07' }],
});
const torch128: PythonFacts = {
  interpreter: '/home/u/venv/bin/python', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: '12.8',
  modules: {
    dynamo: { ok: true, version: '1.0.0', error: null },
    vllm: { ok: true, version: '0.11.0', error: null },
    torch: { ok: true, version: '2.8.0+cu128', error: null },
  },
};
const compat: CompatFacts = { ldLibraryPathCompat: ['/usr/local/cuda/compat'], ldconfigCompat: [], ldconfigLibcuda: ['/lib/x86_64-linux-gnu/libcuda.so.1'], ldconfigError: null };

describe('the Max-Q Workstation Edition desktop card', () => {
  it('is a professional card (unknown), while "with Max-Q Design" laptop parts stay consumer', () => {
    expect(gpuClass(MAXQ_WORKSTATION)).toBe('unknown');
    expect(gpuClass('Quadro RTX 5000 with Max-Q Design')).toBe('consumer');
    expect(gpuClass('NVIDIA GeForce RTX 2080 Super with Max-Q Design')).toBe('consumer');
  });

  it('forward-compat libraries on its load path warn (select NGC-ready RTX SKUs accept them), not fail as on a laptop', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(MAXQ_WORKSTATION), python: torch128, compat }, { env: { LD_LIBRARY_PATH: '/usr/local/cuda/compat:/usr/lib' } }));
    expect(r.status).toBe('warn');
    expect(r.summary).toBe(
      `CUDA forward-compat libraries are on the load path of ${MAXQ_WORKSTATION}; only data-center GPUs and select NGC-ready RTX SKUs accept them (otherwise Error 804: forward compatibility was attempted on non supported HW)`,
    );
  });
});
