import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeCompat } from '../../../src/host/gpu/compat.js';
import { probeComputeApps, probeGpu } from '../../../src/host/gpu/nvidia-smi.js';
import { probeDynamoVersion, probePython, probeVllmVersion, venvDistVersion } from '../../../src/host/python/python.js';
import { runProgram } from '../../../src/host/procs/run-program.js';
import { FIXTURES, SAMPLES } from '../../helpers/cli.js';

// The adapters run the fakes in test/fixtures as real child processes: PATH and PYTHONPATH are
// set only for the child, through the env argument.

const FAKE_BIN = join(FIXTURES, 'bin', 'gpu');
const SYS_PATH = process.env.PATH ?? '/usr/bin:/bin';
const T = 10_000;

const gpuEnv = (vars: Record<string, string> = {}) => ({ PATH: [FAKE_BIN, SYS_PATH].join(delimiter), ...vars });
const pyEnv = (vars: Record<string, string> = {}) => ({ PATH: SYS_PATH, PYTHONPATH: join(FIXTURES, 'python'), ...vars });

const tmp = mkdtempSync(join(tmpdir(), 'dd-gpu-adapters-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('probeGpu against the fake nvidia-smi', () => {
  it('reads the laptop on driver 570 with its CUDA version', async () => {
    const g = await probeGpu(gpuEnv(), T);
    expect(g).toEqual({
      ok: true, driverVersion: '570.133.07', cudaVersion: '12.8',
      gpus: [expect.objectContaining({ index: 0, name: 'NVIDIA GeForce RTX 4060 Laptop GPU', memoryTotalMiB: 8188, memoryFreeMiB: 7676 })],
    });
  });

  it('reads two GPUs on 595 (CUDA 13.2) and the free-memory override', async () => {
    const g = await probeGpu(gpuEnv({ FAKE_NVIDIA_SMI: 'two-gpus-595', FAKE_NVIDIA_SMI_FREE_MIB: '1000' }), T);
    expect(g.ok && g.cudaVersion).toBe('13.2');
    expect(g.ok && g.gpus.map((x) => [x.index, x.memoryFreeMiB])).toEqual([[0, 1000], [1, 1000]]);
  });

  it('keeps [N/A] memory as null on unified memory', async () => {
    const g = await probeGpu(gpuEnv({ FAKE_NVIDIA_SMI: 'unified' }), T);
    expect(g.ok && g.gpus[0].memoryTotalMiB).toBeNull();
  });

  it.each([
    ['no-driver', 'no-driver', "couldn't communicate with the NVIDIA driver"],
    ['mismatch', 'mismatch', 'Driver/library version mismatch'],
    ['no-devices', 'no-devices', 'No devices were found'],
  ])('turns the %s failure into a fact', async (scenario, reason, text) => {
    const g = await probeGpu(gpuEnv({ FAKE_NVIDIA_SMI: scenario }), T);
    expect(g.ok).toBe(false);
    if (!g.ok) {
      expect(g.reason).toBe(reason);
      expect(g.message).toContain(text);
    }
  });

  it('says not-installed, naming nvidia-smi and the driver, when nvidia-smi is not on PATH', async () => {
    const g = await probeGpu({ PATH: '/nonexistent-dir' }, T);
    expect(g).toEqual({ ok: false, reason: 'not-installed', message: 'nvidia-smi not found: the NVIDIA driver is not installed (or not on PATH)' });
  });

  it('reports a hung nvidia-smi as an error after the timeout, without throwing', async () => {
    const dir = join(tmp, 'hang');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    writeFileSync(join(dir, 'nvidia-smi'), '#!/bin/sh\nexec sleep 30\n');
    chmodSync(join(dir, 'nvidia-smi'), 0o755);
    const g = await probeGpu({ PATH: [dir, SYS_PATH].join(delimiter) }, 300);
    expect(g).toEqual({ ok: false, reason: 'error', message: 'nvidia-smi did not answer within 300 ms' });
  });
});

// Dynamo's own checker (ai-dynamo/dynamo deploy/sanity_check.py, GPUInfo) asks nvidia-smi for
// `-L` and for power beside memory; bench/doctor-sanity.mjs runs it against this fake.
describe('the fake nvidia-smi answers the calls of Dynamo\'s own checker', () => {
  const smi = (args: string[], vars: Record<string, string> = {}) => runProgram('nvidia-smi', args, { env: gpuEnv(vars), timeoutMs: T });
  const POWER = ['--query-gpu=power.draw,power.limit,memory.used,memory.total', '--format=csv,noheader,nounits'];

  it('-L and --list-gpus list one line per GPU with its name and UUID', async () => {
    expect(await smi(['-L'])).toMatchObject({
      exitCode: 0, stdout: 'GPU 0: NVIDIA GeForce RTX 4060 Laptop GPU (UUID: GPU-3f1c2a9e-8d7b-4c55-9a0e-1b2c3d4e5f60)',
    });
    expect((await smi(['--list-gpus'], { FAKE_NVIDIA_SMI: 'two-gpus-595' })).stdout.split('\n')).toEqual([
      'GPU 0: NVIDIA GeForce RTX 4080 SUPER (UUID: GPU-00000000-0000-0000-0000-000000000000)',
      'GPU 1: NVIDIA RTX 6000 Ada Generation (UUID: GPU-7a7b7c7d-1111-2222-3333-444455556666)',
    ]);
  });

  it.each([['no-driver', 9], ['mismatch', 18], ['no-devices', 6]])('-L fails on %s as every other call does (exit %i, same text)', async (scenario, code) => {
    const [list, version] = await Promise.all([smi(['-L'], { FAKE_NVIDIA_SMI: scenario }), smi(['--version'], { FAKE_NVIDIA_SMI: scenario })]);
    expect(list.exitCode).toBe(code);
    expect(list.stdout).not.toContain('GPU 0');
    expect(list.stdout).toBe(version.stdout);
  });

  it('reports power draw and limit as the plain table shows them (3W / 80W), per GPU, beside memory', async () => {
    const plain = (await smi([])).stdout;
    expect(plain).toMatch(/\b3W \/ +80W \|/);
    expect(await smi(POWER)).toMatchObject({ exitCode: 0, stdout: '3.00, 80.00, 512, 8188' });
    expect((await smi(POWER, { FAKE_NVIDIA_SMI: 'two-gpus-595' })).stdout).toBe('3.00, 80.00, 596, 16376\n3.00, 80.00, 289, 49140');
    expect((await smi(POWER, { FAKE_NVIDIA_SMI: 'unified' })).stdout).toBe('3.00, 80.00, [N/A], [N/A]');
  });

  it('names the unit in the header and after each value when units are on', async () => {
    const r = await smi(['--query-gpu=power.draw,power.limit,memory.used', '--format=csv']);
    expect(r.stdout.split('\n')).toEqual(['power.draw [W], power.limit [W], memory.used [MiB]', '3.00 W, 80.00 W, 512 MiB']);
  });

  it('the power query fails without a driver as the memory query does', async () => {
    const r = await smi(POWER, { FAKE_NVIDIA_SMI: 'no-driver' });
    expect(r.exitCode).toBe(9);
    expect(r.stdout).toContain("couldn't communicate with the NVIDIA driver");
    expect(r.stdout).not.toContain('80.00');
  });
});

describe('probeComputeApps against the fake', () => {
  it('lists the apps of the real sample with the GPU uuid', async () => {
    const r = await probeComputeApps(gpuEnv({ FAKE_NVIDIA_SMI_APPS: join(SAMPLES, 'nvidia-smi', 'compute-apps.csv') }), T);
    expect(r.ok && r.apps.map((a) => [a.pid, a.processName, a.usedMiB])).toEqual([
      [48211, 'VLLM::EngineCore', 3010], [48377, 'VLLM::EngineCore', 3010], [2165, '/usr/bin/kwin_wayland', 25],
    ]);
    expect(r.ok && r.apps[0].gpuUuid).toBe('GPU-3f1c2a9e-8d7b-4c55-9a0e-1b2c3d4e5f60');
  });
  it('an empty list when nothing runs, and a failure fact without a driver', async () => {
    expect(await probeComputeApps(gpuEnv({ FAKE_NVIDIA_SMI_APPS: 'none' }), T)).toEqual({ ok: true, apps: [] });
    const r = await probeComputeApps(gpuEnv({ FAKE_NVIDIA_SMI: 'no-driver' }), T);
    expect(r.ok).toBe(false);
  });
});

describe('probeCompat', () => {
  it('finds compat dirs in LD_LIBRARY_PATH and compat libcuda in ldconfig', async () => {
    const c = await probeCompat(gpuEnv({ FAKE_LDCONFIG: 'compat', LD_LIBRARY_PATH: '/usr/local/cuda/lib64:/usr/local/cuda/compat' }), T);
    expect(c).toEqual({
      ldLibraryPathCompat: ['/usr/local/cuda/compat'],
      ldconfigCompat: ['/usr/local/cuda-12.9/compat/libcuda.so.1'],
      ldconfigLibcuda: ['/usr/local/cuda-12.9/compat/libcuda.so.1', '/lib/x86_64-linux-gnu/libcuda.so.1'],
      ldconfigError: null,
    });
  });
  it('a failing ldconfig is a fact, not a crash', async () => {
    const c = await probeCompat(gpuEnv({ FAKE_LDCONFIG: 'fail' }), T);
    expect(c.ldconfigError).toContain("Can't open cache file");
    expect(c.ldconfigLibcuda).toEqual([]);
  });
  it('runs the real ldconfig (found in /sbin when PATH lacks it) on this machine without a driver', async () => {
    const c = await probeCompat({ PATH: '/nonexistent-dir' }, T);
    expect(c.ldconfigError).toBeNull();
    expect(c.ldconfigCompat).toEqual([]);
  });
});

describe('probePython against the fake packages', () => {
  it('reads versions and torch.version.cuda in one call', async () => {
    const p = await probePython('python3', 'vllm', pyEnv({ FAKE_TORCH_CUDA: '12.9' }), T);
    expect(p.ok).toBe(true);
    expect(p.pythonVersion).toMatch(/^3\.\d+\.\d+$/);
    expect(p.torchCuda).toBe('12.9');
    // Each with the folder it was imported from (python.env shows it: a second install on PYTHONPATH is a classic cause of a wrong version).
    const at = (name: string) => ({ path: join(FIXTURES, 'python', name), paths: [join(FIXTURES, 'python', name)] });
    expect(p.modules).toEqual({
      dynamo: { ok: true, version: '1.6.1', error: null, ...at('dynamo') },
      torch: { ok: true, version: '2.8.0+cu129', error: null, ...at('torch') },
      nixl: { ok: true, version: '0.6.0', error: null, ...at('nixl') },
      vllm: { ok: true, version: '0.11.0', error: null, ...at('vllm') },
    });
  });
  it('reports each missing module with its ImportError and does not ask for vllm under the mocker', async () => {
    const p = await probePython('python3', 'vllm', pyEnv({ FAKE_MISSING_MODULES: 'vllm,nixl' }), T);
    expect(p.modules.vllm).toEqual({ ok: false, version: null, error: "ModuleNotFoundError: No module named 'vllm'", path: null, paths: [] });
    expect(p.modules.nixl.ok).toBe(false);
    expect(p.modules.dynamo.ok).toBe(true);
    const m = await probePython('python3', 'mocker', pyEnv(), T);
    expect(Object.keys(m.modules)).toEqual(['dynamo', 'dynamo.frontend', 'dynamo.mocker']);
    expect(m.modules['dynamo.mocker']).toEqual({ ok: true, version: '1.6.1', error: null, path: join(FIXTURES, 'python', 'dynamo', 'mocker'), paths: [join(FIXTURES, 'python', 'dynamo', 'mocker')] });
  });
  it('never imports torch for the mocker (a torch that leaves a mark when imported stays unmarked)', async () => {
    const pkgs = join(tmp, 'marking-torch');
    const mark = join(tmp, 'torch-was-imported');
    mkdirSync(join(pkgs, 'torch'), { recursive: true });
    writeFileSync(join(pkgs, 'torch', '__init__.py'), `open(${JSON.stringify(mark)}, "w").close()\n`);
    const m = await probePython('python3', 'mocker', { PATH: SYS_PATH, PYTHONPATH: [pkgs, join(FIXTURES, 'python')].join(delimiter) }, T);
    expect(m.ok).toBe(true);
    expect(existsSync(mark)).toBe(false);
    await probePython('python3', 'vllm', { PATH: SYS_PATH, PYTHONPATH: [pkgs, join(FIXTURES, 'python')].join(delimiter) }, T);
    expect(existsSync(mark)).toBe(true); // the vLLM engine does ask for it: the mark works
  });
  it('a CPU torch build gives torchCuda null', async () => {
    const p = await probePython('python3', 'vllm', pyEnv({ FAKE_TORCH_CUDA: 'none' }), T);
    expect(p.torchCuda).toBeNull();
    expect(p.modules.torch.version).toBe('2.8.0+cpu');
  });
  it('a missing interpreter is ok:false with ENOENT, not a throw', async () => {
    const p = await probePython('/nonexistent/bin/python3', 'vllm', pyEnv(), T);
    expect(p).toMatchObject({ ok: false, modules: {}, torchCuda: null });
    expect(p.error).toContain('not found (ENOENT)');
  });
  it('an interpreter that crashes or prints no JSON is ok:false with the reason', async () => {
    const crash = join(tmp, 'crash-python');
    writeFileSync(crash, '#!/bin/sh\necho "Fatal Python error: init_fs_encoding" >&2\nexit 1\n');
    chmodSync(crash, 0o755);
    const p = await probePython(crash, 'vllm', pyEnv(), T);
    expect(p.ok).toBe(false);
    expect(p.error).toContain('exited with code 1: Fatal Python error');
    const chatty = join(tmp, 'chatty-python');
    writeFileSync(chatty, '#!/bin/sh\necho "hello"\n');
    chmodSync(chatty, 0o755);
    expect((await probePython(chatty, 'vllm', pyEnv(), T)).error).toContain('printed no probe result');
  });
  it('a package that prints on import does not spoil the result', async () => {
    const pkgs = join(tmp, 'chatty-pkgs');
    mkdirSync(join(pkgs, 'dynamo'), { recursive: true });
    writeFileSync(join(pkgs, 'dynamo', '__init__.py'), 'print("{\\"not\\": \\"the probe\\"}")\n__version__ = "9.9.9"\n');
    const p = await probePython('python3', 'mocker', { PATH: SYS_PATH, PYTHONPATH: [pkgs, join(FIXTURES, 'python')].join(delimiter) }, T);
    expect(p.ok).toBe(true);
    expect(p.modules.dynamo).toEqual({ ok: true, version: '9.9.9', error: null, path: join(pkgs, 'dynamo'), paths: [join(pkgs, 'dynamo')] });
  });
  it('a slow interpreter times out into a fact', async () => {
    const slow = join(tmp, 'slow-python');
    writeFileSync(slow, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(slow, 0o755);
    const p = await probePython(slow, 'vllm', pyEnv(), 300);
    expect(p.ok).toBe(false);
    expect(p.error).toContain('within 300 ms');
  });
});

describe('probeDynamoVersion (what plans follow)', () => {
  it('reads the fake package\'s version; null without an interpreter or without Dynamo', async () => {
    expect(await probeDynamoVersion('python3', pyEnv(), T)).toBe('1.6.1');
    expect(await probeDynamoVersion('/nonexistent/bin/python3', pyEnv(), T)).toBeNull();
    expect(await probeDynamoVersion('python3', pyEnv({ FAKE_MISSING_MODULES: 'dynamo' }), T)).toBeNull();
  });
});

describe('probeVllmVersion (what bench records)', () => {
  it('reads vllm\'s package metadata (PYTHONPATH first, as the run would); null without an interpreter', async () => {
    const site = join(tmp, 'vllm-site');
    mkdirSync(join(site, 'vllm-0.31.0.dist-info'), { recursive: true });
    writeFileSync(join(site, 'vllm-0.31.0.dist-info', 'METADATA'), 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.31.0\n');
    expect(await probeVllmVersion('python3', { PATH: SYS_PATH, PYTHONPATH: site }, T)).toBe('0.31.0');
    expect(await probeVllmVersion('/nonexistent/bin/python3', pyEnv(), T)).toBeNull();
  });
});

describe('venvDistVersion (the fast path: no Python started)', () => {
  it('reads ai-dynamo\'s dist-info folder of a virtualenv, not ai-dynamo-runtime\'s; nothing for a non-venv interpreter', async () => {
    const venv = join(tmp, 'venv');
    const site = join(venv, 'lib', 'python3.11', 'site-packages');
    mkdirSync(join(site, 'ai_dynamo_runtime-1.6.1.dist-info'), { recursive: true });
    mkdirSync(join(venv, 'bin'), { recursive: true });
    writeFileSync(join(venv, 'pyvenv.cfg'), 'home = /usr/bin\n');
    expect(await venvDistVersion(join(venv, 'bin', 'python'))).toBeNull();
    mkdirSync(join(site, 'ai_dynamo-1.5.1.dist-info'));
    expect(await venvDistVersion(join(venv, 'bin', 'python'))).toBe('1.5.1');
    expect(await probeDynamoVersion(join(venv, 'bin', 'python'), { PATH: SYS_PATH }, T)).toBe('1.5.1');
    expect(await venvDistVersion('python3')).toBeNull();
    expect(await venvDistVersion(join(tmp, 'no-venv', 'bin', 'python'))).toBeNull();
  });
});
