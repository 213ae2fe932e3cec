import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../../src/plan/build.js';
import { recipeFrom } from '../../helpers/facts.js';

// The plan document (`up --dry-run --json`) of a mocker recipe: the mocker loads no weights and
// captures no CUDA graphs, so the plan claims no GPU memory overhead for it.
describe('a mocker plan\'s memory', () => {
  it('has no overhead, weights or bytes per token; a vLLM plan has its overhead (400 MiB: enforceEager is the default)', () => {
    const mocker = buildPlan({ recipe: recipeFrom({ engine: 'mocker' } as never), runDir: '/r', gpuTotalMiB: 8188 });
    expect(mocker.memory).toEqual({ bytesPerToken: null, weightsMiB: null, overheadMiB: null });
    const vllm = buildPlan({ recipe: recipeFrom(), runDir: '/r', gpuTotalMiB: 8188 });
    expect(vllm.memory).toEqual({ bytesPerToken: null, weightsMiB: null, overheadMiB: 400 });
  });
});
