import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, SAMPLES, tempHome } from '../helpers/cli.js';

// The GPU, CUDA and Python checks through the built binary, with the fake nvidia-smi, ldconfig
// and Python packages from test/fixtures.

const IDS = 'gpu.driver,gpu.memory,cuda.compat,python.env';

interface CheckJson { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: Record<string, unknown> }

const homes: ReturnType<typeof tempHome>[] = [];
afterEach(() => {
  while (homes.length > 0) homes.pop()!.cleanup();
});

async function doctor(o: Parameters<typeof fakeEnv>[1], args: string[] = []) {
  const home = tempHome('dd-doctor-gpu-');
  homes.push(home);
  const r = await runCli(['doctor', '--recipe', 'agg', '--only', IDS, '--json', ...args], fakeEnv(home, o));
  const doc = JSON.parse(r.stdout) as { ok: boolean; checks: CheckJson[] };
  const byId = Object.fromEntries(doc.checks.map((c) => [c.id, c]));
  return { ...r, doc, byId };
}

describe('doctor: GPU, CUDA and Python checks', () => {
  it('no GPU at all: gpu.driver fails with the not-found message and exit 1', async () => {
    const r = await doctor({ python: true });
    expect(r.code).toBe(1);
    expect(r.byId['gpu.driver']).toMatchObject({ status: 'fail', summary: 'nvidia-smi not found: the NVIDIA driver is not installed (or not on PATH)' });
    expect(r.byId['gpu.driver'].fix).toContain('install the NVIDIA driver');
    expect(r.byId['gpu.memory']).toMatchObject({ status: 'skip', summary: 'no GPU facts: see gpu.driver' });
    expect(r.byId['python.env'].status).toBe('pass');
  });

  it('prints the not-found message and its fix for a person too', async () => {
    const home = tempHome('dd-doctor-gpu-');
    homes.push(home);
    const r = await runCli(['doctor', '--recipe', 'agg', '--only', 'gpu.driver'], fakeEnv(home, { python: true }));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('nvidia-smi not found: the NVIDIA driver is not installed (or not on PATH)');
    expect(r.stdout).toMatch(/fix: .*install the NVIDIA driver/);
  });

  it('without a GPU it says the mocker runs here and how (setup, then up mocker), for a missing nvidia-smi and a failing one; with a GPU it does not', async () => {
    const MOCKER = 'without a GPU, the mocker (Dynamo\'s simulated workers, ready in seconds, ~0.7 GB install): `dynamo-dev setup` then `dynamo-dev up mocker`';
    for (const gpu of [undefined, 'no-devices']) {
      const home = tempHome('dd-doctor-gpu-');
      homes.push(home);
      const r = await runCli(['doctor', '--recipe', 'agg', '--only', 'gpu.driver'], fakeEnv(home, { python: true, gpu }));
      expect([gpu, r.code]).toEqual([gpu, 1]);
      expect(r.stdout.split('\n')).toContain(`    ${MOCKER}`);
      // ... and the other way, with its cost: real vLLM on the CPU.
      expect(r.stdout).toContain('or the CPU engine (real vLLM workers, ~2 min to ready, ~6.2 GB install): `dynamo-dev setup --device cpu` then `dynamo-dev up agg-router --device cpu` (docs/cpu.md)');
      const j = await doctor({ python: true, gpu });
      expect(j.byId['gpu.driver'].details).toContain(MOCKER);
    }
    const home = tempHome('dd-doctor-gpu-');
    homes.push(home);
    const ok = await runCli(['doctor', '--only', 'gpu.driver'], fakeEnv(home, { python: true, gpu: 'desktop-595' }));
    expect(ok.code).toBe(0);
    expect(ok.stdout).not.toContain('mocker');
    expect((await doctor({ python: true, gpu: 'desktop-595' })).byId['gpu.driver'].details.join('\n')).not.toContain('mocker');
  });

  it('laptop on driver 570 with torch built for CUDA 12.9: cuda.compat fails naming 12.8, 12.9, Error 804 and 575.51.03, no cu128 wheel that does not exist', async () => {
    const r = await doctor({ gpu: 'laptop-570', python: true, vars: { FAKE_TORCH_CUDA: '12.9' } });
    expect(r.code).toBe(1);
    const c = r.byId['cuda.compat'];
    expect(c.status).toBe('fail');
    expect(c.summary).toContain('12.9');
    expect(c.summary).toContain('12.8');
    expect(c.summary).toContain('Error 804');
    // No release's vLLM is built for CUDA 12.8 (the release table), so the driver is the only fix.
    expect(c.fix).toBe('install an NVIDIA driver >= 575.51.03 (CUDA 12.9)');
    expect(r.byId['gpu.driver'].status).toBe('pass');
  });

  it('desktop on driver 595 (CUDA 13.2): every GPU check passes, exit 0', async () => {
    const r = await doctor({ gpu: 'desktop-595', python: true, vars: { FAKE_TORCH_CUDA: '12.9' } });
    expect(r.doc.checks.map((c) => [c.id, c.status])).toEqual([
      ['gpu.driver', 'pass'], ['gpu.memory', 'pass'], ['cuda.compat', 'pass'], ['python.env', 'pass'],
    ]);
    expect(r.code).toBe(0);
    expect(r.byId['gpu.driver'].evidence).toMatchObject({ driverVersion: '595.71.05', cudaVersion: '13.2' });
    expect(r.byId['python.env'].summary).toContain('torch 2.8.0+cu129 (CUDA 12.9)');
  });

  it('LD_LIBRARY_PATH with /usr/local/cuda/compat on the laptop: cuda.compat fails with Error 804', async () => {
    const r = await doctor({ gpu: 'laptop-570', python: true, vars: { LD_LIBRARY_PATH: '/usr/local/cuda/lib64:/usr/local/cuda/compat' } });
    expect(r.code).toBe(1);
    const c = r.byId['cuda.compat'];
    expect(c.status).toBe('fail');
    expect(c.summary).toContain('Error 804: forward compatibility was attempted on non supported HW');
    expect(c.details).toContain('LD_LIBRARY_PATH contains /usr/local/cuda/compat');
    expect(c.fix).toContain('export LD_LIBRARY_PATH=/usr/local/cuda/lib64');
  });

  it('a cuda-compat package in ld.so.cache on the laptop: cuda.compat fails', async () => {
    const r = await doctor({ gpu: 'laptop-570', python: true, vars: { FAKE_LDCONFIG: 'compat' } });
    expect(r.byId['cuda.compat'].status).toBe('fail');
    expect(r.byId['cuda.compat'].fix).toContain('cuda-compat-12-9');
  });

  it('driver/library mismatch: gpu.driver and cuda.compat fail and say reboot', async () => {
    const r = await doctor({ gpu: 'mismatch', python: true });
    expect(r.code).toBe(1);
    expect(r.byId['gpu.driver'].status).toBe('fail');
    expect(r.byId['gpu.driver'].fix).toMatch(/reboot/);
    expect(r.byId['cuda.compat'].status).toBe('fail');
    expect(r.byId['cuda.compat'].fix).toMatch(/reboot/);
  });

  it('leftover engines hold the memory: gpu.memory fails and lists them', async () => {
    const r = await doctor({
      gpu: 'laptop-570', python: true,
      vars: { FAKE_NVIDIA_SMI_FREE_MIB: '1600', FAKE_NVIDIA_SMI_APPS: join(SAMPLES, 'nvidia-smi', 'compute-apps.csv') },
    });
    const m = r.byId['gpu.memory'];
    expect(m.status).toBe('fail');
    expect(m.summary).toContain('only 1600 MiB free of 8188 MiB');
    expect(m.details).toContain('pid 48211 VLLM::EngineCore: 3010 MiB');
    expect(m.fix).toContain('dynamo-dev teardown --orphans');
  });

  it('unified memory: gpu.memory warns instead of passing', async () => {
    const r = await doctor({ gpu: 'unified', python: true });
    expect(r.byId['gpu.memory'].status).toBe('warn');
  });

  it('python.env fails naming the missing module, and a missing interpreter points at --python', async () => {
    const r = await doctor({ gpu: 'desktop-595', python: true, vars: { FAKE_MISSING_MODULES: 'vllm' } });
    expect(r.byId['python.env'].status).toBe('fail');
    expect(r.byId['python.env'].summary).toContain('cannot import vllm');
    expect(r.byId['python.env'].fix).toContain('pip install "ai-dynamo[vllm]"');
    const gone = await doctor({ gpu: 'desktop-595', python: true }, ['--python', '/nonexistent/python3']);
    expect(gone.byId['python.env'].status).toBe('fail');
    expect(gone.byId['python.env'].summary).toContain('not found');
    expect(gone.byId['cuda.compat'].status).toBe('skip');
  });

  it('the mocker recipe needs neither a GPU nor vllm', async () => {
    const r = await doctor({ python: true, vars: { FAKE_MISSING_MODULES: 'vllm,torch,nixl' } }, ['--recipe', 'mocker']);
    expect(r.doc.checks.map((c) => [c.id, c.status])).toEqual([
      ['gpu.driver', 'skip'], ['gpu.memory', 'skip'], ['cuda.compat', 'skip'], ['python.env', 'pass'],
    ]);
    expect(r.code).toBe(0);
  });
});
