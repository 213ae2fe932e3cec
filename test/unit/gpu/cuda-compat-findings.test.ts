import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/cuda.compat.js';
import type { CompatFacts, GpuFacts, PythonFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';

// cuda.compat as the user reads it: the exact verdict line, the evidence lines under it, the fix
// (a command they can paste), and how two findings combine into one result.
const LAPTOP = 'NVIDIA GeForce RTX 4060 Laptop GPU';
const H100 = 'NVIDIA H100 80GB HBM3';
const E804 = 'Error 804: forward compatibility was attempted on non supported HW';
const NO_ENV_VAR = 'set VLLM_ENABLE_CUDA_COMPATIBILITY=0 for the workers so vLLM does not load them itself';

const gpuOf = (name: string, driverVersion: string | null, cudaVersion: string | null): GpuFacts => ({
  ok: true, driverVersion, cudaVersion,
  gpus: [{ ...(healthyGpu.ok ? healthyGpu.gpus[0] : ({} as never)), name, driverVersion }],
});
const torchBuild = (cuda: string | null, version: string | null = cuda ? `2.8.0+cu${cuda.replace('.', '')}` : '2.8.0+cpu'): PythonFacts => ({
  interpreter: '/home/u/venv/bin/python', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: cuda,
  modules: {
    dynamo: { ok: true, version: '1.0.0', error: null },
    vllm: { ok: true, version: '0.11.0', error: null },
    torch: { ok: true, version, error: null },
  },
});
const compatOf = (c: Partial<CompatFacts> = {}): CompatFacts => ({
  ldLibraryPathCompat: [], ldconfigCompat: [], ldconfigLibcuda: ['/lib/x86_64-linux-gnu/libcuda.so.1'], ldconfigError: null, ...c,
});

describe('cuda.compat: a matching build passes, and says what it looked at', () => {
  it('a build equal to the driver CUDA passes with the GPU class and the full evidence', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.8'), compat: compatOf() }));
    expect(r).toEqual({
      status: 'pass',
      summary: 'torch CUDA 12.8 <= driver CUDA 12.8 (driver 570.133.07); no forward-compat libraries on the load path',
      details: [`GPU 0: ${LAPTOP} (consumer)`],
      fix: null,
      evidence: {
        gpu: LAPTOP, gpuClass: 'consumer', driverVersion: '570.133.07', driverCuda: '12.8', torchCuda: '12.8',
        torchVersion: '2.8.0+cu128', computeCapability: '8.9', dynamoVersion: '1.0.0', ldLibraryPathCompat: [], ldconfigCompat: [],
        ldconfigLibcuda: ['/lib/x86_64-linux-gnu/libcuda.so.1'], ldconfigError: null,
      },
    });
  });

  it('an unknown driver version passes as "?" and an unread ld.so.cache is named under it', async () => {
    const compat = compatOf({ ldconfigLibcuda: [], ldconfigError: 'ldconfig not found on PATH or in /sbin' });
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, null, '12.8'), python: torchBuild('12.6'), compat }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('torch CUDA 12.6 <= driver CUDA 12.8 (driver ?); no forward-compat libraries on LD_LIBRARY_PATH (ld.so.cache not read: ldconfig not found on PATH or in /sbin)');
    expect(r.details).toEqual([`GPU 0: ${LAPTOP} (consumer)`, 'ldconfig: ldconfig not found on PATH or in /sbin']);
  });

  it('one libcuda.so.1 in ld.so.cache is the driver\'s own: passes', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.8'), compat: compatOf() }));
    expect(r.status).toBe('pass');
  });

  it('two libcuda.so.1 on a GeForce warn, listing both and how to find the extra one', async () => {
    const compat = compatOf({ ldconfigLibcuda: ['/opt/cuda-fc/libcuda.so.1', '/lib/x86_64-linux-gnu/libcuda.so.1'] });
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.8'), compat }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: `ld.so.cache lists 2 libcuda.so.1: one may be a forward-compat copy, which ${LAPTOP} refuses (Error 804)`,
      details: ['libcuda.so.1 => /opt/cuda-fc/libcuda.so.1', 'libcuda.so.1 => /lib/x86_64-linux-gnu/libcuda.so.1'],
      fix: "keep only the driver's libcuda.so.1: find the extra one with `ldconfig -p | grep libcuda.so.1`, remove its /etc/ld.so.conf.d entry and run `sudo ldconfig`",
    });
  });

  it('two libcuda.so.1 on a data-center GPU, which accepts compat copies, pass', async () => {
    const compat = compatOf({ ldconfigLibcuda: ['/opt/cuda-fc/libcuda.so.1', '/lib/x86_64-linux-gnu/libcuda.so.1'] });
    const r = await check.run(fakeFacts({ gpu: gpuOf(H100, '570.133.07', '12.8'), python: torchBuild('12.8'), compat }));
    expect(r.status).toBe('pass');
  });
});

describe('cuda.compat: forward-compat libraries on the load path', () => {
  it('on a GeForce: fails with Error 804, and the fix keeps the rest of LD_LIBRARY_PATH', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda-12.9/compat/'] });
    const env = { LD_LIBRARY_PATH: '/usr/local/cuda/lib64::/usr/local/cuda-12.9/compat/:/opt/lib' };
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.8'), compat }, { env }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: `CUDA forward-compat libraries are on the load path of ${LAPTOP}, a GeForce/laptop GPU that refuses them: CUDA init fails with "${E804}"`,
      details: ['LD_LIBRARY_PATH contains /usr/local/cuda-12.9/compat/'],
      fix: 'remove /usr/local/cuda-12.9/compat/ from LD_LIBRARY_PATH (`export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/opt/lib`); ' + NO_ENV_VAR,
    });
  });

  it('when the compat dir was all of LD_LIBRARY_PATH, the fix offers unset too', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda/compat'] });
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.8'), compat }, { env: { LD_LIBRARY_PATH: '/usr/local/cuda/compat' } }));
    expect(r.fix).toBe('remove /usr/local/cuda/compat from LD_LIBRARY_PATH (`export LD_LIBRARY_PATH=` or `unset LD_LIBRARY_PATH`); ' + NO_ENV_VAR);
  });

  it('compat packages in ld.so.cache: each package named once, an unversioned dir as cuda-compat-*', async () => {
    const compat = compatOf({
      ldconfigCompat: ['/usr/local/cuda-12.9/compat/libcuda.so.1', '/usr/local/cuda-12.9/compat/libcuda.so', '/opt/compat/libcuda.so.1'],
    });
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.8'), compat }));
    expect(r.details).toEqual([
      'ld.so.cache (ldconfig -p) has /usr/local/cuda-12.9/compat/libcuda.so.1',
      'ld.so.cache (ldconfig -p) has /usr/local/cuda-12.9/compat/libcuda.so',
      'ld.so.cache (ldconfig -p) has /opt/compat/libcuda.so.1',
    ]);
    expect(r.fix).toBe(
      'uninstall the forward-compat package (`sudo apt remove cuda-compat-12-9 cuda-compat-*`, or delete its /etc/ld.so.conf.d/*compat* entry and run `sudo ldconfig`); ' + NO_ENV_VAR,
    );
  });

  it('a two-digit minor names its package in full; a compat dir written with several trailing slashes is still left out', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda-13.10/compat//'], ldconfigCompat: ['/usr/local/cuda-13.10/compat/libcuda.so.1'] });
    const env = { LD_LIBRARY_PATH: '/opt/lib:/usr/local/cuda-13.10/compat//' };
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.8'), compat }, { env }));
    expect(r.fix).toBe(
      'remove /usr/local/cuda-13.10/compat// from LD_LIBRARY_PATH (`export LD_LIBRARY_PATH=/opt/lib`); ' +
        'uninstall the forward-compat package (`sudo apt remove cuda-compat-13-10`, or delete its /etc/ld.so.conf.d/*compat* entry and run `sudo ldconfig`); ' + NO_ENV_VAR,
    );
  });

  it('on a card of unknown class: only a warning, with the fix for when Error 804 does show', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda/compat'] });
    const r = await check.run(fakeFacts({ gpu: gpuOf('NVIDIA RTX 6000 Ada Generation', '570.133.07', '12.8'), python: torchBuild('12.8'), compat }, { env: { LD_LIBRARY_PATH: '/usr/local/cuda/compat:/usr/lib' } }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: `CUDA forward-compat libraries are on the load path of NVIDIA RTX 6000 Ada Generation; only data-center GPUs and select NGC-ready RTX SKUs accept them (otherwise ${E804})`,
      details: ['LD_LIBRARY_PATH contains /usr/local/cuda/compat'],
      fix: 'if workers fail with Error 804: remove /usr/local/cuda/compat from LD_LIBRARY_PATH (`export LD_LIBRARY_PATH=/usr/lib`); ' + NO_ENV_VAR,
    });
  });

  it('on a data-center GPU, compat libraries are the intended path: pass', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda/compat'], ldconfigLibcuda: ['/usr/local/cuda/compat/libcuda.so.1', '/lib/libcuda.so.1'] });
    const r = await check.run(fakeFacts({ gpu: gpuOf(H100, '570.133.07', '12.8'), python: torchBuild('12.8'), compat }));
    expect(r.status).toBe('pass');
  });
});

describe('cuda.compat: the torch build against the driver', () => {
  it('a newer minor on a GeForce fails with Error 804 and both ways out', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.9'), compat: compatOf() }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: `torch is built for CUDA 12.9 (2.8.0+cu129) but driver 570.133.07 supports CUDA 12.8: vLLM fails at engine start with "${E804}"`,
      details: [`GPU 0: ${LAPTOP}`, 'driver 570.133.07 -> CUDA 12.8', '/home/u/venv/bin/python: torch 2.8.0+cu129, torch.version.cuda 12.9'],
      fix: 'install an NVIDIA driver >= 575.51.03 (CUDA 12.9)',
    });
  });

  it('a newer minor on a data-center GPU below the major floor fails with "driver too old", not 804', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(H100, '520.61.05', '12.0'), python: torchBuild('12.1'), compat: compatOf() }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('torch is built for CUDA 12.1 (2.8.0+cu121) but driver 520.61.05 supports CUDA 12.0: vLLM fails at engine start ("The NVIDIA driver on your system is too old")');
  });

  it('a newer minor on an unknown card is judged as 804-prone', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf('NVIDIA RTX 6000 Ada Generation', '570.133.07', '12.8'), python: torchBuild('12.9'), compat: compatOf() }));
    expect(r.summary).toContain(`vLLM fails at engine start with "${E804}"`);
  });

  it('a newer minor on a data-center GPU warns, with the driver and the build fix side by side', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(H100, '570.133.07', '12.8'), python: torchBuild('12.9', null), compat: compatOf() }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: 'torch is built for CUDA 12.9 (torch) but driver 570.133.07 supports CUDA 12.8: it starts through minor-version/forward compatibility on this data-center GPU, with reduced features (newer PTX cannot be JIT-compiled)',
      details: [`GPU 0: ${H100}`, 'driver 570.133.07 -> CUDA 12.8', '/home/u/venv/bin/python: torch ?, torch.version.cuda 12.9'],
      fix: 'install an NVIDIA driver >= 575.51.03 (CUDA 12.9)',
    });
  });

  it('a newer major fails on any GPU; without a known driver version it says "?"', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(H100, null, '12.8'), python: torchBuild('13.0'), compat: compatOf() }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'torch is built for CUDA 13.0 (2.8.0+cu130) but driver ? supports CUDA 12.8: a CUDA 13.x build never runs on a CUDA 12.x driver (CUDA init fails: driver too old, or Error 804)',
      details: [`GPU 0: ${H100}`, 'driver ? -> CUDA 12.8', '/home/u/venv/bin/python: torch 2.8.0+cu130, torch.version.cuda 13.0'],
      fix: 'install an NVIDIA driver >= 580.65.06 (CUDA 13.0)',
    });
  });

  it('a build of a toolkit with no known driver floor asks for "one supporting" it', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('14.0'), compat: compatOf() }));
    expect(r.fix).toBe('install an NVIDIA driver >= one supporting CUDA 14.0 (CUDA 14.0)');
  });

  it('a CPU build of torch warns that vLLM cannot use the GPU, with the wheel for this driver', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild(null), compat: compatOf() }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: 'torch 2.8.0+cpu is a CPU build (torch.version.cuda is None): vLLM cannot use the GPU',
      details: ['interpreter: /home/u/venv/bin/python'],
      fix: 'no ai-dynamo release has a vLLM build for this machine (driver 570.133.07 accepts CUDA 12.8, and every build for compute capability 8.9 needs CUDA 12.9 or newer (driver >= 575.51.03)): NVIDIA driver >= 580.65.06 (CUDA 13.0) for ai-dynamo 1.6.1 (vLLM 0.31.0)',
    });
  });

  it('a CPU build with no version and no driver CUDA: the driver\'s CUDA from NVIDIA\'s table decides', async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', null), python: torchBuild(null, null), compat: compatOf() }));
    expect(r.summary).toBe('torch is a CPU build (torch.version.cuda is None): vLLM cannot use the GPU');
    expect(r.fix).toBe('no ai-dynamo release has a vLLM build for this machine (driver 570.133.07 accepts CUDA 12.8, and every build for compute capability 8.9 needs CUDA 12.9 or newer (driver >= 575.51.03)): NVIDIA driver >= 580.65.06 (CUDA 13.0) for ai-dynamo 1.6.1 (vLLM 0.31.0)');
  });

  it("a CUDA build with the driver's CUDA unknown warns with the driver that build needs", async () => {
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', null), python: torchBuild('12.9'), compat: compatOf() }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: "torch is built for CUDA 12.9 but the driver's CUDA version is unknown (nvidia-smi did not print it)",
      details: ['driver 570.133.07'],
      fix: 'make sure the driver supports CUDA 12.9: driver >= 575.51.03',
    });
    const odd = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, null, null), python: torchBuild('14.0'), compat: compatOf() }));
    expect(odd.details).toEqual(['driver unknown']);
    expect(odd.fix).toBe('make sure the driver supports CUDA 14.0: driver >= the one bundled with that toolkit');
  });
});

describe('cuda.compat: several findings make one result', () => {
  it('a fail leads, the other finding follows as a line, and the fix joins both ways out', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda/compat'] });
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: torchBuild('12.9'), compat }, { env: { LD_LIBRARY_PATH: '/usr/local/cuda/compat' } }));
    expect(r.status).toBe('fail');
    expect(r.summary).toMatch(/^CUDA forward-compat libraries are on the load path/);
    expect(r.details).toEqual([
      'LD_LIBRARY_PATH contains /usr/local/cuda/compat',
      `torch is built for CUDA 12.9 (2.8.0+cu129) but driver 570.133.07 supports CUDA 12.8: vLLM fails at engine start with "${E804}"`,
      `GPU 0: ${LAPTOP}`, 'driver 570.133.07 -> CUDA 12.8', '/home/u/venv/bin/python: torch 2.8.0+cu129, torch.version.cuda 12.9',
    ]);
    expect(r.fix).toBe(
      'remove /usr/local/cuda/compat from LD_LIBRARY_PATH (`export LD_LIBRARY_PATH=` or `unset LD_LIBRARY_PATH`); ' + NO_ENV_VAR +
        '; install an NVIDIA driver >= 575.51.03 (CUDA 12.9)',
    );
  });

  it('a fail after a warning still leads; the warning is a line under it and its fix is left out', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda/compat'] });
    const r = await check.run(fakeFacts({ gpu: gpuOf('NVIDIA RTX 6000 Ada Generation', '570.133.07', '12.8'), python: torchBuild('12.9'), compat }));
    expect(r.status).toBe('fail');
    expect(r.summary).toMatch(/^torch is built for CUDA 12\.9/);
    expect(r.details[0]).toMatch(/^CUDA forward-compat libraries are on the load path of NVIDIA RTX 6000 Ada Generation; only/);
    expect(r.details[1]).toBe('LD_LIBRARY_PATH contains /usr/local/cuda/compat');
    expect(r.fix).toBe('install an NVIDIA driver >= 575.51.03 (CUDA 12.9)');
  });

  it('two warnings: the first leads, both fixes are given', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda/compat'] });
    const r = await check.run(fakeFacts({ gpu: gpuOf('NVIDIA RTX 6000 Ada Generation', '570.133.07', '12.8'), python: torchBuild(null), compat }));
    expect(r.status).toBe('warn');
    expect(r.summary).toMatch(/^CUDA forward-compat libraries/);
    expect(r.details).toEqual([
      'LD_LIBRARY_PATH contains /usr/local/cuda/compat',
      'torch 2.8.0+cpu is a CPU build (torch.version.cuda is None): vLLM cannot use the GPU',
      'interpreter: /home/u/venv/bin/python',
    ]);
    expect(r.fix).toBe(
      'if workers fail with Error 804: remove /usr/local/cuda/compat from LD_LIBRARY_PATH (`export LD_LIBRARY_PATH=` or `unset LD_LIBRARY_PATH`); ' + NO_ENV_VAR +
        '; no ai-dynamo release has a vLLM build for this machine (driver 570.133.07 accepts CUDA 12.8, and every build for compute capability 8.9 needs CUDA 12.9 or newer (driver >= 575.51.03)): NVIDIA driver >= 580.65.06 (CUDA 13.0) for ai-dynamo 1.6.1 (vLLM 0.31.0)',
    );
  });

  it('compat libraries on a GeForce fail even when torch cannot be asked', async () => {
    const compat = compatOf({ ldLibraryPathCompat: ['/usr/local/cuda/compat'] });
    const py: PythonFacts = { ...torchBuild(null), ok: false, error: 'not found (ENOENT)', modules: {} };
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: py, compat }));
    expect(r.status).toBe('fail');
    expect(r.evidence).toMatchObject({ torchCuda: null, torchVersion: null });
  });
});

describe('cuda.compat: when it cannot judge', () => {
  it('without a Python env: a skip that names the error and says no compat libraries were found', async () => {
    const py: PythonFacts = { ...torchBuild(null), ok: false, error: 'not found (ENOENT)', modules: {} };
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: py, compat: compatOf() }));
    expect(r).toMatchObject({
      status: 'skip',
      summary: 'the Python env could not be asked (not found (ENOENT)): see python.env; no forward-compat libraries found',
      fix: null,
    });
  });

  it('without torch: a skip that says its build is unknown', async () => {
    const py = torchBuild('12.8');
    py.modules.torch = { ok: false, version: null, error: "ModuleNotFoundError: No module named 'torch'" };
    const r = await check.run(fakeFacts({ gpu: gpuOf(LAPTOP, '570.133.07', '12.8'), python: py, compat: compatOf() }));
    expect(r.summary).toBe('torch is not importable, so its CUDA build is unknown: see python.env; no forward-compat libraries found');
    expect(r.evidence).toMatchObject({ torchCuda: null, torchVersion: null });
  });

  it('a driver upgraded without a reboot fails, quoting nvidia-smi', async () => {
    const message = 'Failed to initialize NVML: Driver/library version mismatch';
    const r = await check.run(fakeFacts({ gpu: { ok: false, reason: 'mismatch', message } }));
    expect(r).toEqual({
      status: 'fail',
      summary: 'Driver/library version mismatch: the NVIDIA driver was upgraded without a reboot; new CUDA processes fail (often with Error 804)',
      details: [`nvidia-smi: ${message}`],
      fix: 'reboot or reload the nvidia kernel module (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia`)',
      evidence: { reason: 'mismatch', message },
    });
  });

  it('other nvidia-smi failures, the mocker engine and an unlisted GPU are skips', async () => {
    expect(await check.run(fakeFacts({ gpu: { ok: false, reason: 'no-driver', message: 'x' } }))).toEqual({
      status: 'skip', summary: 'no GPU facts: see gpu.driver', details: [], fix: null, evidence: { reason: 'no-driver' },
    });
    const mocker = recipeFrom({ engine: 'mocker' });
    expect(await check.run(fakeFacts({}, { recipe: mocker, plan: buildPlan({ recipe: mocker, runDir: '/tmp/x' }) }))).toEqual({
      status: 'skip', summary: 'the mocker engine does not initialise CUDA', details: [], fix: null, evidence: {},
    });
    const gpu1 = recipeFrom({ gpu: 1 });
    const r = await check.run(fakeFacts({}, { recipe: gpu1, plan: buildPlan({ recipe: gpu1, runDir: '/tmp/x' }) }));
    expect(r.evidence).toEqual({ gpu: 1 });
  });
});
