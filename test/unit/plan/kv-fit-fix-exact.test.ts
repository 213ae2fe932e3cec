import { describe, expect, it } from 'vitest';
import { UserError } from '../../../src/errors.js';
import { buildPlan } from '../../../src/plan/build.js';
import { validateRecipe } from '../../../src/recipe/load.js';

// The fix of a plan whose KV cache cannot hold maxModelLen, at its exact edges. Qwen3-0.6B's
// 114,688 bytes per token: 448 MiB hold exactly 4,096 tokens, 28 MiB exactly 256.
const BPT = 114_688;
const fixOf = (fraction: number, weightsMiB: number, limit = 0.9): string => {
  const recipe = validateRecipe({ name: 't', workers: [{ role: 'agg', gpuMemoryUtilization: fraction }], maxModelLen: 4096, enforceEager: true, memory: { limit } }, 't');
  try {
    buildPlan({ recipe, runDir: '/r', gpuTotalMiB: 8000, model: { bytesPerToken: BPT, weightsMiB } });
  } catch (err) {
    if (err instanceof UserError) return err.fix ?? '';
    throw err;
  }
  throw new Error('expected the plan to be refused');
};

describe('the fix for a KV cache too small for maxModelLen', () => {
  it('a fraction that reaches exactly maxModelLen only at memory.limit is offered', () => {
    // 8000 x 0.9 - 6352 - 400 = 448 MiB = 4,096 tokens; at 0.5 nothing is left.
    expect(fixOf(0.5, 6352)).toBe('raise its fraction (--set workers.0.gpuMemoryUtilization=0.9)');
  });

  it('a KV cache of exactly 256 tokens still suggests a maxModelLen of 256', () => {
    // 8000 x 0.5 - 3572 - 400 = 28 MiB = 256 tokens.
    expect(fixOf(0.5, 3572)).toBe('raise its fraction (--set workers.0.gpuMemoryUtilization=0.56) or lower maxModelLen (--set maxModelLen=256)');
  });

  it('the frontend publishes no KV events; only workers do', () => {
    const recipe = validateRecipe({ name: 't', workers: [{ role: 'agg', gpuMemoryUtilization: 0.3 }], frontend: { routerMode: 'kv' } }, 't');
    expect(buildPlan({ recipe, runDir: '/r' }).processes.map((p) => p.publishesKvEvents)).toEqual([false, true]);
  });
});

// A recipe may give a fraction between hundredths (0.385): the raise offered is the next hundredth
// that holds maxModelLen, not one past it, and never past what memory.limit leaves.
describe('the raise for a fraction between hundredths', () => {
  it('0.385 is raised to 0.39 when 0.39 holds maxModelLen exactly (8000 x 0.39 - 2272 - 400 = 448 MiB)', () => {
    expect(fixOf(0.385, 2272)).toMatch(/^raise its fraction \(--set workers\.0\.gpuMemoryUtilization=0\.39\)/);
  });

  it('one MiB more of weights and 0.39 falls short: 0.4', () => {
    expect(fixOf(0.385, 2273)).toMatch(/^raise its fraction \(--set workers\.0\.gpuMemoryUtilization=0\.4\)/);
  });

  it('at a memory.limit of 0.385 itself there is no hundredth to raise to: only a shorter length', () => {
    expect(fixOf(0.385, 2272, 0.385)).toBe('lower maxModelLen (--set maxModelLen=3584)');
  });
});
