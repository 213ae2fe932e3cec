import { describe, expect, it } from 'vitest';
import { UserError } from '../../../src/errors.js';
import { buildPlan, resolveFractions } from '../../../src/plan/build.js';
import { validateRecipe } from '../../../src/recipe/load.js';

// GPU memory fractions and the "does one request of maxModelLen fit" judgement of a plan, at
// their boundaries. Recipes are built inside each test (module-level fixtures make every mutant
// of the planner "static" for mutation testing, which then reruns all tests for each).
const RUN = '/state/runs/r1';
const recipe = (workers: unknown[], extra: Record<string, unknown> = {}) => validateRecipe({ name: 't', workers, ...extra }, 't');
const errorOf = (f: () => unknown): UserError => {
  try {
    f();
  } catch (err) {
    if (err instanceof UserError) return err;
    throw err;
  }
  throw new Error('expected a UserError');
};

describe('fractions against memory.limit', () => {
  it('fractions that add up to exactly the limit are accepted', () => {
    const r = resolveFractions(recipe([{ role: 'decode', gpuMemoryUtilization: 0.45 }, { role: 'prefill', gpuMemoryUtilization: 0.45 }]));
    expect(r.map((w) => w.fraction)).toEqual([0.45, 0.45]);
  });

  it('a sum over the limit by float rounding only (a billionth) is accepted; more is not', () => {
    // 0.1 + 0.2 is 0.30000000000000004 in binary floating point.
    expect(resolveFractions(recipe([{ role: 'agg', gpuMemoryUtilization: 0.1 }, { role: 'agg', gpuMemoryUtilization: 0.2 }], { memory: { limit: 0.3 } })))
      .toHaveLength(2);
    expect(resolveFractions(recipe([{ role: 'agg', gpuMemoryUtilization: 0.500000001 }], { memory: { limit: 0.5 } }))).toHaveLength(1);
    expect(() => resolveFractions(recipe([{ role: 'agg', gpuMemoryUtilization: 0.500000002 }], { memory: { limit: 0.5 } }))).toThrow(UserError);
  });

  it('over the limit: the message lists the explicit fractions only, not the "auto" ones', () => {
    const r = recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.5 }, { role: 'agg', gpuMemoryUtilization: 'auto' }]);
    expect(errorOf(() => resolveFractions(r)).message).toBe(
      'workers.*.gpuMemoryUtilization: the fractions add up to 1 (agg-0 0.5 + agg-1 0.5), over memory.limit 0.9; lower them so they sum to <= 0.9',
    );
  });

  it('"auto" next to explicit fractions that use the whole limit leaves nothing: an error, not a worker at 0', () => {
    const r = recipe([{ role: 'decode', gpuMemoryUtilization: 0.9 }, { role: 'prefill', gpuMemoryUtilization: 'auto' }]);
    expect(errorOf(() => resolveFractions(r)).message).toBe(
      'workers.*.gpuMemoryUtilization: "auto" leaves nothing: explicit fractions use 0.9 of memory.limit 0.9',
    );
  });

  it('"auto" that would get less than 0.01 each is nothing too', () => {
    const r = recipe([{ role: 'decode', gpuMemoryUtilization: 0.85 }, { role: 'prefill', replicas: 6, gpuMemoryUtilization: 'auto' }]);
    expect(() => resolveFractions(r)).toThrow('"auto" leaves nothing: explicit fractions use 0.85 of memory.limit 0.9');
  });

  it('fractions split by auto never round over the limit', () => {
    // 0.9 / 7 = 0.12857...: rounded to 0.13 the seven would take 0.91.
    const r = resolveFractions(recipe([{ role: 'agg', replicas: 7, gpuMemoryUtilization: 'auto' }]));
    expect(r.map((w) => w.fraction)).toEqual(Array(7).fill(0.12));
    expect(r.reduce((s, w) => s + w.fraction, 0)).toBeLessThanOrEqual(0.9);
  });

  it('an error of a plan names the recipe it came from', () => {
    const r = recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.5 }]);
    expect(errorOf(() => buildPlan({ recipe: r, runDir: RUN, source: 'my.yaml' })).message).toMatch(/^my\.yaml: workers\.\*\.gpuMemoryUtilization: the fractions add up to 1/);
    expect(errorOf(() => buildPlan({ recipe: r, runDir: RUN })).message).toMatch(/^workers\.\*\.gpuMemoryUtilization:/);
  });
});

describe('disaggregated roles', () => {
  it('decode workers without a prefill worker are refused, and prefill without decode', () => {
    const need = 'workers: a disaggregated recipe needs at least one "prefill" and one "decode" worker';
    expect(() => buildPlan({ recipe: recipe([{ role: 'decode', replicas: 2, gpuMemoryUtilization: 0.3 }]), runDir: RUN })).toThrow(need);
    expect(() => buildPlan({ recipe: recipe([{ role: 'prefill', replicas: 2, gpuMemoryUtilization: 0.3 }]), runDir: RUN })).toThrow(need);
  });
});

describe('one request of maxModelLen must fit in each worker\'s KV cache', () => {
  // 8000 MiB x 0.5 = 4000 MiB - 3152 MiB weights - 400 MiB overhead (eager) = 448 MiB; at Qwen3-0.6B's
  // 114,688 bytes per token that is exactly 4,096 tokens.
  const BPT = 114_688;
  const agg = (extra: Record<string, unknown> = {}) =>
    recipe([{ role: 'agg', gpuMemoryUtilization: 0.5 }], { maxModelLen: 4096, enforceEager: true, ...extra });

  it('KV tokens exactly equal to the max model length are enough', () => {
    const p = buildPlan({ recipe: agg(), runDir: RUN, gpuTotalMiB: 8000, model: { bytesPerToken: BPT, weightsMiB: 3152 } });
    expect(p.processes[1].kvTokensEstimate).toBe(4096);
  });

  it('one MiB more of weights is a plan that cannot fit, with the fraction that would and a maxModelLen that fits', () => {
    const err = errorOf(() => buildPlan({ recipe: agg(), runDir: RUN, gpuTotalMiB: 8000, model: { bytesPerToken: BPT, weightsMiB: 3153 } }));
    expect(err.message).toBe(
      'workers: agg-0 at gpuMemoryUtilization 0.5 gets ~4000 MiB of 8000 MiB; after weights (~3153 MiB) and overhead (~400 MiB) that leaves ' +
        '~447 MiB = ~4086 KV tokens at 114,688 bytes/token, fewer than maxModelLen 4096',
    );
    expect(err.fix).toBe('raise its fraction (--set workers.0.gpuMemoryUtilization=0.51) or lower maxModelLen (--set maxModelLen=3840)');
  });

  it('without --enforce-eager the overhead is larger (CUDA graphs), and the fix accounts for it', () => {
    const err = errorOf(() => buildPlan({ recipe: agg({ enforceEager: false }), runDir: RUN, gpuTotalMiB: 8000, model: { bytesPerToken: BPT, weightsMiB: 3152 } }));
    expect(err.message).toContain('after weights (~3152 MiB) and overhead (~700 MiB) that leaves ~148 MiB = ~1353 KV tokens');
    expect(err.fix).toBe('raise its fraction (--set workers.0.gpuMemoryUtilization=0.54) or lower maxModelLen (--set maxModelLen=1280)');
  });

  it('a fraction already at the limit and a KV cache under 256 tokens: no --set can help, the fix says what can', () => {
    const r = recipe([{ role: 'agg', gpuMemoryUtilization: 0.9 }], { maxModelLen: 4096, enforceEager: true });
    const err = errorOf(() => buildPlan({ recipe: r, runDir: RUN, gpuTotalMiB: 4000, model: { bytesPerToken: BPT, weightsMiB: 3180 } }));
    expect(err.message).toContain('leaves ~20 MiB = ~182 KV tokens');
    expect(err.fix).toBe('the GPU is too small for this model at this maxModelLen: use a smaller model or a shorter maxModelLen');
  });

  it('a raise that cannot reach maxModelLen within the limit offers only a shorter maxModelLen', () => {
    // 4000 x 0.85 - 2900 - 400 = 100 MiB (914 tokens); even at 0.9 it would be 300 MiB, under the 448 needed.
    const r = recipe([{ role: 'agg', gpuMemoryUtilization: 0.85 }], { maxModelLen: 4096, enforceEager: true });
    const err = errorOf(() => buildPlan({ recipe: r, runDir: RUN, gpuTotalMiB: 4000, model: { bytesPerToken: BPT, weightsMiB: 2900 } }));
    expect(err.message).toContain('~914 KV tokens');
    expect(err.fix).toBe('lower maxModelLen (--set maxModelLen=768)');
  });
});
