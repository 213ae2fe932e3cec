import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';

const IDS = [
  'gpu.driver', 'gpu.memory', 'cuda.compat', 'cpu.memory', 'cpu.features', 'python.env', 'procs.leftover', 'model.available', 'hf.locks',
  'ucx.transports', 'ports.free', 'kv.events', 'kv.allocated', 'frontend.models', 'logs.errors',
];

const home = tempHome();
afterAll(() => home.cleanup());

describe('doctor on a machine without a GPU', () => {
  const env = fakeEnv(home);

  it('plain doctor judges the recipe this machine can run, the mocker, and says which; gpu.driver is no failure there', async () => {
    // Issue 31: it judged agg (3 failed, fixes to install vLLM into the system Python and fetch a model from the hub).
    const r = await runCli(['doctor'], env);
    expect(r.stdout.split('\n')[0]).toBe('dynamo-dev doctor  recipe mocker (no GPU here; --recipe agg judges the GPU one)');
    expect(r.stdout).toMatch(/^- NVIDIA driver and GPU +no GPU, which the mocker engine does not need/m);
    expect(r.stdout).toMatch(/^. Python environment .*dynamo\.mocker/m);
    expect(r.stdout).not.toMatch(/^. Python environment .*dynamo\.vllm/m);
    const doc = JSON.parse((await runCli(['doctor', '--json'], env)).stdout);
    expect(doc.checks.find((c: { id: string }) => c.id === 'gpu.driver').status).toBe('skip');
    // With a GPU's nvidia-smi on PATH (even one that fails), the default stays agg.
    const gpu = await runCli(['doctor', '--only', 'gpu.driver'], fakeEnv(home, { gpu: 'laptop-570' }));
    expect(gpu.stdout.split('\n')[0]).toMatch(/recipe agg \(default\)/);
    expect(gpu.stdout).not.toMatch(/two ways to run/);
  });

  it('plain doctor names both ways to run without a GPU, the mocker and the CPU engine, each with its cost and commands, in 80 columns', async () => {
    // Issue 32: it named only `--recipe agg`; both ways were said only when gpu.driver failed (doctor --recipe agg).
    const r = await runCli(['doctor', '--only', 'gpu.driver'], env);
    const lines = r.stdout.split('\n');
    expect(lines.slice(2, 8)).toEqual([
      'no GPU here: two ways to run (the first is judged below)',
      '  the mocker: Dynamo\'s simulated workers, ready in seconds, ~0.7 GB install',
      '    dynamo-dev setup && dynamo-dev up mocker',
      '  the CPU engine: real vLLM workers, ~2 min to ready, ~6.2 GB install',
      '    dynamo-dev setup --device cpu && dynamo-dev up agg-router --device cpu',
      '    judge it: dynamo-dev doctor agg-router --device cpu (docs/cpu.md)',
    ]);
    // The title and the block fit 80 columns unwrapped (the machine line wraps on a terminal).
    for (const l of [lines[0], ...lines.slice(2, 8)]) expect(l.length).toBeLessThanOrEqual(80);
    // A recipe named: that recipe is judged and gpu.driver's failure says both ways (no header block).
    const agg = await runCli(['doctor', '--recipe', 'agg', '--only', 'gpu.driver'], env);
    expect(agg.stdout).not.toMatch(/two ways to run/);
    expect(agg.stdout).toMatch(/the mocker \(.*\): `dynamo-dev setup` then `dynamo-dev up mocker`/);
    expect(agg.stdout).toMatch(/the CPU engine \(.*\): `dynamo-dev setup --device cpu` then `dynamo-dev up agg-router --device cpu`/);
    // The command it prints to judge the CPU engine judges it: the CPU plan, the GPU checks skip saying why.
    const cpu = await runCli(['doctor', 'agg-router', '--device', 'cpu', '--only', 'gpu.driver'], env);
    expect(cpu.stdout.split('\n')[0]).toBe('dynamo-dev doctor  recipe agg-router');
    expect(cpu.stdout).toMatch(/^- NVIDIA driver and GPU +the recipe runs on the CPU/m);
  });

  it('--recipe agg: fails gpu.driver saying nvidia-smi / the driver was not found, all fifteen ids in order, in under 2 s', async () => {
    const r = await runCli(['doctor', '--recipe', 'agg', '--json'], env);
    expect(r.code).toBe(1);
    expect(r.durationMs).toBeLessThan(2000);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(expect.arrayContaining(['ok', 'durationMs', 'checks']));
    expect(doc.ok).toBe(false);
    expect(doc.checks.map((c: { id: string }) => c.id)).toEqual(IDS);
    for (const c of doc.checks) {
      expect(Object.keys(c).sort()).toEqual(['details', 'durationMs', 'evidence', 'fix', 'id', 'status', 'summary', 'title']);
      expect(['pass', 'warn', 'fail', 'skip']).toContain(c.status);
    }
    const gpu = doc.checks[0];
    expect(gpu.status).toBe('fail');
    expect(gpu.summary).toMatch(/nvidia-smi/);
    expect(gpu.summary + gpu.details.join(' ')).toMatch(/driver/i);
    expect(gpu.fix).toBeTruthy();
    expect(r.stderr).toBe('');
  });

  it('prints a human report with marks, evidence, a fix line and a footer', async () => {
    const r = await runCli(['doctor', '--recipe', 'agg'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^✗ .*nvidia-smi/m);
    expect(r.stdout).toMatch(/^ {4}fix: /m);
    expect(r.stdout).toMatch(/\d+ passed, \d+ warned, \d+ failed, \d+ skipped in \d+\.\d\d s: not ready for experiments/);
    expect(r.stdout).not.toMatch(/\x1b\[/); // NO_COLOR
  });

  it('runs only the checks asked for', async () => {
    const r = await runCli(['doctor', '--only', 'gpu.driver,ports.free', '--json'], env);
    expect(JSON.parse(r.stdout).checks.map((c: { id: string }) => c.id)).toEqual(['gpu.driver', 'ports.free']);
    const s = await runCli(['doctor', '--skip', 'gpu.driver', '--json'], env);
    expect(JSON.parse(s.stdout).checks).toHaveLength(14);
  });

  it('lists ids and titles', async () => {
    const r = await runCli(['doctor', '--list', '--json'], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).checks.map((c: { id: string }) => c.id)).toEqual(IDS);
  });
});

describe('doctor input errors exit 2 with one line and run nothing', () => {
  const env = fakeEnv(home);
  const write = (name: string, text: string) => {
    const p = join(home.dir, name);
    writeFileSync(p, text);
    return p;
  };

  it.each([
    ['unknown field', 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilisation: 0.4\n', /unknown field "workers\.0\.gpuMemoryUtilisation"/],
    ['fraction 1.7', 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 1.7\n', /workers\.0\.gpuMemoryUtilization: must be a fraction in \(0, 1\] or "auto" \(got 1\.7\)/],
    ['fractions over the limit', 'name: t\nworkers:\n  - role: decode\n    gpuMemoryUtilization: 0.5\n  - role: prefill\n    gpuMemoryUtilization: 0.5\n', /add up to 1 \(decode-0 0\.5 \+ prefill-0 0\.5\), over memory\.limit 0\.9/],
  ])('%s', async (_name, text, pattern) => {
    const file = write(`${_name.replace(/\W+/g, '-')}.yaml`, text);
    const r = await runCli(['doctor', '--recipe', file, '--json'], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(file);
    expect(lines[0]).toMatch(pattern);
  });

  it('an unknown recipe name lists the built-ins', async () => {
    const r = await runCli(['doctor', '--recipe', 'agg-routr'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown recipe "agg-routr"; did you mean "agg-router"\? built-in recipes: agg, agg-router, agg-router-approx, disagg-same-gpu, mocker/);
  });

  it.each([[[] as string[]], [['--json']]])('--logs with a path that does not exist: exit 2, one line on stderr, nothing on stdout %j', async (extra) => {
    const missing = join(home.dir, 'no-such-logs');
    const r = await runCli(['doctor', ...extra, '--logs', missing], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`dynamo-dev: --logs: ${missing}: no such file or folder; pass log files or folders (a run's logs are in runs/<run-id>/logs of the state directory)`);
  });

  it('an unknown check id or flag is an input error', async () => {
    expect((await runCli(['doctor', '--only', 'gpu.drivr'], env)).code).toBe(2);
    expect((await runCli(['doctor', '--frobnicate'], env)).code).toBe(2);
  });
});
