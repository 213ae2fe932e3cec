import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/cuda.compat.js';
import type { CompatFacts, GpuFacts, PythonFacts } from '../../../src/host/types.js';
import { fakeFacts, healthyGpu } from '../../helpers/facts.js';

// cuda.compat's fix on a laptop GPU with forward-compat libraries on LD_LIBRARY_PATH: an
// `export LD_LIBRARY_PATH=...` line that keeps every other entry, in order, ":" separated, and
// drops the compat entry however it is written.
const base = healthyGpu.ok ? healthyGpu.gpus[0] : ({} as never);
const laptop: GpuFacts = { ok: true, driverVersion: '570.133.07', cudaVersion: '12.8', gpus: [{ ...base, name: 'NVIDIA GeForce RTX 4060 Laptop GPU' }] };
const python: PythonFacts = {
  interpreter: 'python3', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: '12.8',
  modules: { dynamo: { ok: true, version: '1.0.0', error: null }, vllm: { ok: true, version: '0.11.0', error: null }, torch: { ok: true, version: '2.8.0+cu128', error: null } },
};
const compatOn = (...dirs: string[]): CompatFacts => ({ ldLibraryPathCompat: dirs, ldconfigCompat: [], ldconfigLibcuda: ['/lib/x86_64-linux-gnu/libcuda.so.1'], ldconfigError: null });

describe('cuda.compat: the cleaned LD_LIBRARY_PATH', () => {
  it('keeps the other two entries, ":" separated', async () => {
    const r = await check.run(fakeFacts({ gpu: laptop, python, compat: compatOn('/usr/local/cuda-12.9/compat') }, {
      env: { LD_LIBRARY_PATH: '/opt/nccl/lib:/usr/local/cuda-12.9/compat:/usr/local/cuda/lib64' },
    }));
    expect(r.status).toBe('fail');
    expect(r.fix).toContain('(`export LD_LIBRARY_PATH=/opt/nccl/lib:/usr/local/cuda/lib64`)');
  });

  it('a relative compat entry (cuda-12.9/compat) is dropped too: nothing left, so unset', async () => {
    const r = await check.run(fakeFacts({ gpu: laptop, python, compat: compatOn('cuda-12.9/compat') }, { env: { LD_LIBRARY_PATH: 'cuda-12.9/compat' } }));
    expect(r.fix).toContain('(`export LD_LIBRARY_PATH=` or `unset LD_LIBRARY_PATH`)');
  });

  it('two compat entries are both named, comma separated', async () => {
    const r = await check.run(fakeFacts({ gpu: laptop, python, compat: compatOn('/usr/local/cuda-12.9/compat', '/opt/cuda-13.0/compat') }, {
      env: { LD_LIBRARY_PATH: '/usr/local/cuda-12.9/compat:/opt/cuda-13.0/compat:/usr/local/cuda/lib64' },
    }));
    expect(r.fix).toMatch(/^remove \/usr\/local\/cuda-12\.9\/compat, \/opt\/cuda-13\.0\/compat from LD_LIBRARY_PATH \(`export LD_LIBRARY_PATH=\/usr\/local\/cuda\/lib64`\)/);
  });
});
