import { beforeEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/plan/types.js';
import type { Recipe } from '../../../src/recipe/schema.js';
import check from '../../../src/doctor/checks/gpu.memory.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { GpuFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';

const UUID = 'GPU-3f1c2a9e-8d7b-4c55-9a0e-1b2c3d4e5f60';
const withFree = (free: number): GpuFacts =>
  healthyGpu.ok ? { ...healthyGpu, gpus: [{ ...healthyGpu.gpus[0], memoryFreeMiB: free, memoryUsedMiB: 8188 - free }] } : healthyGpu;
const leftovers = {
  ok: true as const,
  apps: [
    { pid: 48211, processName: 'VLLM::EngineCore', usedMiB: 3010, gpuUuid: null },
    { pid: 48377, processName: 'VLLM::EngineCore', usedMiB: 3010, gpuUuid: null },
    { pid: 2165, processName: '/usr/bin/kwin_wayland', usedMiB: 25, gpuUuid: UUID },
    { pid: 777, processName: 'other-gpu-job', usedMiB: 9000, gpuUuid: 'GPU-someone-else' },
  ],
};
// Two workers at 0.38 on an 8188 MiB GPU: 0.76 x 8188 = 6223 MiB.
// Built before each test, not at module load: mutation testing counts code run at load as "static" and reruns every test for each such mutant.
let recipe: Recipe;
let plan: Plan;
beforeEach(() => {
  recipe = recipeFrom({ workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 }] });
  plan = buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
});

describe('gpu.memory', () => {
  it('passes when free memory covers the sum of fractions x total', async () => {
    const r = await check.run(fakeFacts({}, { recipe, plan }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('7676 MiB free of 8188 MiB on GPU 0; the plan needs 6223 MiB (fractions 0.76 x 8188 MiB)');
  });

  it('fails when leftover engines hold the memory, listing them and pointing at teardown', async () => {
    const r = await check.run(fakeFacts({ gpu: withFree(1600), computeApps: leftovers }, { recipe, plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('only 1600 MiB free of 8188 MiB on GPU 0; the plan needs 6223 MiB (fractions 0.76 x 8188 MiB)');
    expect(r.details).toEqual([
      'pid 48211 VLLM::EngineCore: 3010 MiB',
      'pid 48377 VLLM::EngineCore: 3010 MiB',
      'pid 2165 /usr/bin/kwin_wayland: 25 MiB',
    ]);
    expect(r.fix).toContain('dynamo-dev teardown --orphans');
    expect(r.fix).toContain('<= 0.19');
  });

  it("counts a live run's own memory as available: doctor during a run does not fail because of it", async () => {
    const run = { record: { id: 'r1', processes: [] }, live: true, pids: [48211, 48377] } as unknown as RunView;
    const r = await check.run(fakeFacts({ gpu: withFree(1600), computeApps: leftovers, run }, { recipe, plan }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('(+6020 MiB held by the live run)');
    expect(r.details).toContain('pid 48211 VLLM::EngineCore: 3010 MiB (this run)');
  });

  it('computes the budget from the GPU total when the plan was built without one', async () => {
    const noTotal = buildPlan({ recipe, runDir: '/tmp/dd-run' });
    const r = await check.run(fakeFacts({ gpu: withFree(6000) }, { recipe, plan: noTotal }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('needs 6223 MiB');
    // Nothing listed to stop: the fix starts with the one way out, not with "or".
    expect(r.fix).toBe('lower the workers\' gpuMemoryUtilization so they add up to <= 0.73: `--set workers.0.gpuMemoryUtilization=0.36` (with `--dry-run` added, `dynamo-dev up` of this recipe shows the KV each worker keeps)');
  });

  it('warns, never passes, on unified memory where nvidia-smi says [N/A]', async () => {
    const unified: GpuFacts = { ok: true, driverVersion: '580.95.05', cudaVersion: '13.0', gpus: [{
      index: 0, name: 'NVIDIA GB10', uuid: null, driverVersion: '580.95.05', memoryTotalMiB: null, memoryUsedMiB: null,
      memoryFreeMiB: null, computeCap: '12.1', pciBusId: null,
    }] };
    const r = await check.run(fakeFacts({ gpu: unified }, { recipe, plan }));
    expect(r.status).toBe('warn');
    expect(r.summary).toContain('[N/A]');
    expect(r.summary).toContain('unified memory');
  });

  it('skips without GPU facts and for the mocker engine', async () => {
    const noGpu = await check.run(fakeFacts({ gpu: { ok: false, reason: 'not-installed', message: 'x' } }, { recipe, plan }));
    expect(noGpu).toMatchObject({ status: 'skip', summary: 'no GPU facts: see gpu.driver' });
    const mock = recipeFrom({ engine: 'mocker' });
    const r = await check.run(fakeFacts({}, { recipe: mock, plan: buildPlan({ recipe: mock, runDir: '/tmp/x', gpuTotalMiB: 8188 }) }));
    expect(r.status).toBe('skip');
  });
});
