import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../../src/plan/build.js';
import { validateRecipe } from '../../../src/recipe/load.js';

// A worker may get --enforce-eager from its own `args` instead of the recipe's enforceEager: vLLM
// then captures no CUDA graphs either, so its KV estimate and the fit check use eager's overhead
// (400 MiB, not 700). Qwen3-0.6B's 114,688 bytes per token: 448 MiB hold exactly 4,096 tokens.
const BPT = 114_688;
const planOf = (worker: Record<string, unknown>, enforceEager = false) =>
  buildPlan({
    recipe: validateRecipe({ name: 't', workers: [{ role: 'agg', gpuMemoryUtilization: 0.5, ...worker }], maxModelLen: 4096, enforceEager }, 't'),
    runDir: '/r', gpuTotalMiB: 8000, model: { bytesPerToken: BPT, weightsMiB: 3152 },
  });

describe('--enforce-eager in a worker\'s args', () => {
  it('is planned like enforceEager: true (8000 x 0.5 - 3152 - 400 = 448 MiB = exactly 4,096 tokens fit)', () => {
    const viaArgs = planOf({ args: ['--enforce-eager'] });
    expect(viaArgs.processes[1].argv).toContain('--enforce-eager');
    expect(viaArgs.processes[1].kvTokensEstimate).toBe(4096);
    expect(planOf({}, true).processes[1].kvTokensEstimate).toBe(4096);
  });

  it('without it the same worker keeps 700 MiB of overhead and is refused, naming the overhead', () => {
    expect(() => planOf({})).toThrow(/overhead \(~700 MiB\) that leaves ~148 MiB = ~1353 KV tokens/);
  });
});
