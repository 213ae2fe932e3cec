import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/gpu.memory.js';
import type { GpuFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';

// A disaggregated recipe (a prefill and a decode entry) that does not fit: the fix lowers both
// entries, one --set each, space separated, ready to paste after `dynamo-dev up`.
describe('gpu.memory: a fix for two worker entries', () => {
  it('names one --set per entry, separated by a space', async () => {
    const recipe = recipeFrom({ workers: [{ role: 'prefill', gpuMemoryUtilization: 0.38 }, { role: 'decode', gpuMemoryUtilization: 0.38 }] });
    const plan = buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
    const gpu: GpuFacts = healthyGpu.ok ? { ...healthyGpu, gpus: [{ ...healthyGpu.gpus[0], memoryFreeMiB: 4094, memoryUsedMiB: 4094 }] } : healthyGpu;
    const r = await check.run(fakeFacts({ gpu }, { recipe, plan }));
    expect(r.status).toBe('fail');
    expect(r.fix).toMatch(/`--set workers\.0\.gpuMemoryUtilization=0\.\d+ --set workers\.1\.gpuMemoryUtilization=0\.\d+`/);
  });
});
