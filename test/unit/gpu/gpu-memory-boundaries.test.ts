import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/gpu.memory.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { ComputeAppsFacts, GpuFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';

// gpu.memory as the user reads it: the exact line, the processes under it, the fix, and the
// --json evidence. Two workers at 0.38 on an 8188 MiB GPU need ceil(0.76 x 8188) = 6223 MiB.
const UUID = 'GPU-3f1c2a9e-8d7b-4c55-9a0e-1b2c3d4e5f60';

function setup(free: number, gpu: Partial<Extract<GpuFacts, { ok: true }>['gpus'][0]> = {}) {
  const recipe = recipeFrom({ workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 }] });
  const plan = buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
  const g: GpuFacts = healthyGpu.ok
    ? { ...healthyGpu, gpus: [{ ...healthyGpu.gpus[0], memoryFreeMiB: free, memoryUsedMiB: 8188 - free, ...gpu }] }
    : healthyGpu;
  return { recipe, plan, gpu: g };
}
const apps = (...list: [number, string, number | null, string | null][]): ComputeAppsFacts => ({
  ok: true, apps: list.map(([pid, processName, usedMiB, gpuUuid]) => ({ pid, processName, usedMiB, gpuUuid })),
});
const NOTHING_LISTED = 'no compute app is listed: the memory may be held by graphics or another container';

describe('gpu.memory: the budget boundary', () => {
  it('exactly enough free memory passes', async () => {
    const { recipe, plan, gpu } = setup(6223);
    const r = await check.run(fakeFacts({ gpu }, { recipe, plan }));
    expect(r).toEqual({
      status: 'pass',
      summary: '6223 MiB free of 8188 MiB on GPU 0; the plan needs 6223 MiB (fractions 0.76 x 8188 MiB)',
      details: [],
      fix: null,
      evidence: { gpu: 0, totalMiB: 8188, freeMiB: 6223, fractionSum: 0.76, apps: [], budgetMiB: 6223, availableMiB: 6223 },
    });
  });

  it('one MiB short fails, with a fix that fits what is free', async () => {
    const { recipe, plan, gpu } = setup(6222);
    const r = await check.run(fakeFacts({ gpu }, { recipe, plan }));
    expect(r).toEqual({
      status: 'fail',
      summary: 'only 6222 MiB free of 8188 MiB on GPU 0; the plan needs 6223 MiB (fractions 0.76 x 8188 MiB)',
      details: [NOTHING_LISTED],
      fix: "lower the workers' gpuMemoryUtilization so they add up to <= 0.75: `--set workers.0.gpuMemoryUtilization=0.37` (with `--dry-run` added, `dynamo-dev up` of this recipe shows the KV each worker keeps)",
      evidence: { gpu: 0, totalMiB: 8188, freeMiB: 6222, fractionSum: 0.76, apps: [], budgetMiB: 6223, availableMiB: 6222 },
    });
  });

  it("the live run's own memory makes up exactly the rest: passes", async () => {
    const { recipe, plan, gpu } = setup(6000);
    const run = { record: { id: 'r1', processes: [] }, live: true, pids: [501] } as unknown as RunView;
    const r = await check.run(fakeFacts({ gpu, run, computeApps: apps([501, 'VLLM::EngineCore', 223, UUID]) }, { recipe, plan }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('6000 MiB free of 8188 MiB on GPU 0 (+223 MiB held by the live run); the plan needs 6223 MiB (fractions 0.76 x 8188 MiB)');
    expect(r.details).toEqual(['pid 501 VLLM::EngineCore: 223 MiB (this run)']);
    expect(r.evidence).toMatchObject({ availableMiB: 6223, apps: [{ pid: 501, name: 'VLLM::EngineCore', usedMiB: 223, ours: true }] });
  });

  it('a run that is no longer live does not lend its memory: its pids count as anyone else', async () => {
    const { recipe, plan, gpu } = setup(6000);
    const run = { live: false, pids: [501] } as unknown as RunView;
    const r = await check.run(fakeFacts({ gpu, run, liveRun: run, computeApps: apps([501, 'VLLM::EngineCore', 223, UUID]) }, { recipe, plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('only 6000 MiB free of 8188 MiB on GPU 0; the plan needs 6223 MiB (fractions 0.76 x 8188 MiB)');
    expect(r.details).toEqual(['pid 501 VLLM::EngineCore: 223 MiB']);
    expect(r.fix).toBe(
      'stop leftover engine processes: `dynamo-dev teardown --orphans`; or lower the workers\' gpuMemoryUtilization so they add up to <= 0.73: ' +
        '`--set workers.0.gpuMemoryUtilization=0.36` (with `--dry-run` added, `dynamo-dev up` of this recipe shows the KV each worker keeps)',
    );
  });
});

describe('gpu.memory: who holds the memory', () => {
  it('lists other programs by pid and asks to stop them when none is an engine', async () => {
    const { recipe, plan, gpu } = setup(2000);
    const computeApps = apps([2165, '/usr/bin/kwin_wayland', 25, UUID], [3001, 'python3', 4000, UUID]);
    const r = await check.run(fakeFacts({ gpu, computeApps }, { recipe, plan }));
    expect(r.details).toEqual(['pid 2165 /usr/bin/kwin_wayland: 25 MiB', 'pid 3001 python3: 4000 MiB']);
    expect(r.fix).toBe(
      'stop the processes above (pids 2165, 3001); or lower the workers\' gpuMemoryUtilization so they add up to <= 0.24: ' +
        '`--set workers.0.gpuMemoryUtilization=0.12` (with `--dry-run` added, `dynamo-dev up` of this recipe shows the KV each worker keeps)',
    );
    expect(r.evidence.apps).toEqual([
      { pid: 2165, name: '/usr/bin/kwin_wayland', usedMiB: 25, ours: false },
      { pid: 3001, name: 'python3', usedMiB: 4000, ours: false },
    ]);
  });

  it('recognises Dynamo frontends, mockers and vLLM workers by name as leftover engines', async () => {
    for (const name of ['python3 -m dynamo.vllm', 'python -m dynamo.frontend', 'DYNAMO.MOCKER', 'vllm::EngineCore']) {
      const { recipe, plan, gpu } = setup(2000);
      const r = await check.run(fakeFacts({ gpu, computeApps: apps([7, name, 100, UUID]) }, { recipe, plan }));
      expect(r.fix, name).toMatch(/^stop leftover engine processes: `dynamo-dev teardown --orphans`; or lower/);
    }
    const { recipe, plan, gpu } = setup(2000);
    const r = await check.run(fakeFacts({ gpu, computeApps: apps([7, 'python3 -m dynamoXvllm', 100, UUID]) }, { recipe, plan }));
    expect(r.fix).toMatch(/^stop the processes above \(pids 7\); or lower/);
  });

  it('shows an unnamed process and an unknown amount as such', async () => {
    const { recipe, plan, gpu } = setup(2000);
    const r = await check.run(fakeFacts({ gpu, computeApps: apps([9, '', null, UUID]) }, { recipe, plan }));
    expect(r.details).toEqual(['pid 9 (unnamed): ? MiB']);
  });

  it("leaves out another GPU's programs, keeps ones whose GPU is unknown", async () => {
    const { recipe, plan, gpu } = setup(2000);
    const computeApps = apps([1, 'python3', 100, 'GPU-someone-else'], [2, 'python3', 200, null], [3, 'python3', 300, UUID]);
    const r = await check.run(fakeFacts({ gpu, computeApps }, { recipe, plan }));
    expect(r.details).toEqual(['pid 2 python3: 200 MiB', 'pid 3 python3: 300 MiB']);
  });

  it('keeps every program when the GPU itself has no uuid', async () => {
    const { recipe, plan, gpu } = setup(2000, { uuid: null });
    const computeApps = apps([1, 'python3', 100, 'GPU-someone-else'], [3, 'python3', 300, UUID]);
    const r = await check.run(fakeFacts({ gpu, computeApps }, { recipe, plan }));
    expect(r.details).toEqual(['pid 1 python3: 100 MiB', 'pid 3 python3: 300 MiB']);
  });

  it('says when the compute apps could not be listed, under a pass too', async () => {
    const { recipe, plan, gpu } = setup(7000);
    const r = await check.run(fakeFacts({ gpu, computeApps: { ok: false, message: 'nvidia-smi --query-compute-apps failed' } }, { recipe, plan }));
    expect(r.status).toBe('pass');
    expect(r.details).toEqual(['compute apps unknown: nvidia-smi --query-compute-apps failed']);
    expect(r.evidence.apps).toEqual([]);
  });

  it('when too little is free for any fraction, says so instead of a --set that would round to 0', async () => {
    const { recipe, plan, gpu } = setup(50);
    const r = await check.run(fakeFacts({ gpu }, { recipe, plan }));
    expect(r.status).toBe('fail');
    expect(r.fix).toBe('the GPU has too little free memory left for these workers: free some first');
  });
});

describe('gpu.memory: when it cannot judge', () => {
  it('warns with the exact reason and a way to check by hand on unified memory', async () => {
    const { recipe, plan, gpu } = setup(0, { name: 'NVIDIA GB10', uuid: null, memoryTotalMiB: null, memoryFreeMiB: null, memoryUsedMiB: null });
    const r = await check.run(fakeFacts({ gpu }, { recipe, plan }));
    expect(r).toEqual({
      status: 'warn',
      summary: "GPU 0 (NVIDIA GB10) reports no memory figures ([N/A], unified memory): the plan's budget of 0.76 x total cannot be checked",
      details: [],
      fix: 'check free system memory with `free -m` before starting; on unified memory the fractions apply to memory shared with the CPU',
      evidence: { gpu: 0, totalMiB: null, freeMiB: null, fractionSum: 0.76, apps: [] },
    });
  });

  it('skips the mocker engine with a zero budget as evidence', async () => {
    const recipe = recipeFrom({ engine: 'mocker' });
    const r = await check.run(fakeFacts({}, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x', gpuTotalMiB: 8188 }) }));
    expect(r).toEqual({ status: 'skip', summary: 'the mocker engine uses no GPU memory', details: [], fix: null, evidence: { budgetMiB: 0 } });
  });

  it('skips a plan with no memory budget whatever the engine', async () => {
    const { recipe, plan, gpu } = setup(0);
    const r = await check.run(fakeFacts({ gpu }, { recipe, plan: { ...plan, budget: { ...plan.budget, fractionSum: 0 } } }));
    expect(r).toMatchObject({ status: 'skip', evidence: { budgetMiB: 0 } });
    expect(r.details).toEqual([]);
  });

  it('skips without GPU facts, naming the reason in the evidence', async () => {
    const r = await check.run(fakeFacts({ gpu: { ok: false, reason: 'no-driver', message: 'x' } }));
    expect(r).toEqual({ status: 'skip', summary: 'no GPU facts: see gpu.driver', details: [], fix: null, evidence: { reason: 'no-driver' } });
  });

  it("skips when the recipe's GPU is not listed (gpu.driver fails it)", async () => {
    const recipe = recipeFrom({ gpu: 3 });
    const r = await check.run(fakeFacts({}, { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x', gpuTotalMiB: 8188 }) }));
    expect(r).toEqual({ status: 'skip', summary: 'GPU 3 is not listed: see gpu.driver', details: [], fix: null, evidence: {} });
  });
});
