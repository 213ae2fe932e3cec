import { describe, expect, it } from 'vitest';
import { fitFractionSets, raiseFractionSet, workerEntryOf } from '../../../src/plan/fix-hints.js';
import { validateRecipe } from '../../../src/recipe/load.js';

// The `--set` lines a fix suggests: which recipe entry a worker comes from, fractions scaled down to
// fit, and the highest fraction one entry can take within memory.limit.
const recipe = (workers: unknown[], extra: Record<string, unknown> = {}) => validateRecipe({ name: 't', workers, ...extra }, 't');

describe('which recipe entry a planned worker comes from', () => {
  it('replicas of one entry, the next entry of the same role, and roles counted apart', () => {
    const r = recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.2 }, { role: 'agg', gpuMemoryUtilization: 0.2 }]);
    expect(['agg-0', 'agg-1', 'agg-2', 'agg-3'].map((n) => workerEntryOf(r, n))).toEqual([0, 0, 1, null]);
    const d = recipe([{ role: 'decode', gpuMemoryUtilization: 0.3 }, { role: 'prefill', replicas: 2, gpuMemoryUtilization: 0.2 }]);
    expect(['decode-0', 'prefill-0', 'prefill-1', 'frontend'].map((n) => workerEntryOf(d, n))).toEqual([0, 1, 1, null]);
  });
});

describe('fractions scaled down to fit', () => {
  it('every replica of an entry gets the same, floored to 2 decimals', () => {
    // 2 x 0.38 = 0.76 scaled to 0.5: 0.38 x 0.5 / 0.76 = 0.25 (floored with a float tolerance).
    expect(fitFractionSets(recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 }]), 0.5)).toEqual(['--set workers.0.gpuMemoryUtilization=0.25']);
  });

  it('what already fits (also exactly) needs no --set for explicit fractions; "auto" ones are named with their value', () => {
    const r = recipe([{ role: 'decode', gpuMemoryUtilization: 0.3 }, { role: 'prefill', replicas: 2, gpuMemoryUtilization: 'auto' }]);
    // auto: (0.9 - 0.3) / 2 = 0.3 each; total 0.9.
    expect(fitFractionSets(r, 0.9)).toEqual(['--set workers.1.gpuMemoryUtilization=0.3']);
    expect(fitFractionSets(recipe([{ role: 'agg', gpuMemoryUtilization: 0.38 }]), 0.38)).toEqual([]);
    expect(fitFractionSets(recipe([{ role: 'agg', gpuMemoryUtilization: 0.38 }]), 0.8)).toEqual([]);
  });

  it('mixed entries scale together', () => {
    const r = recipe([{ role: 'decode', gpuMemoryUtilization: 0.4 }, { role: 'prefill', gpuMemoryUtilization: 0.4 }]);
    expect(fitFractionSets(r, 0.4)).toEqual(['--set workers.0.gpuMemoryUtilization=0.2', '--set workers.1.gpuMemoryUtilization=0.2']);
  });

  it('nothing fits, or a fraction would round to 0: no suggestion', () => {
    const r = recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 }]);
    expect(fitFractionSets(r, 0)).toEqual([]);
    expect(fitFractionSets(r, -1)).toEqual([]);
    expect(fitFractionSets(r, 0.01)).toEqual([]);
    expect(fitFractionSets(r, 0.02)).toEqual(['--set workers.0.gpuMemoryUtilization=0.01']);
  });
});

describe('the highest fraction one entry can take', () => {
  it('what the limit leaves after the other entries, split over the entry\'s replicas', () => {
    const r = recipe([{ role: 'decode', gpuMemoryUtilization: 0.3 }, { role: 'prefill', gpuMemoryUtilization: 0.3 }]);
    expect(raiseFractionSet(r, 0)).toBe('--set workers.0.gpuMemoryUtilization=0.6');
    expect(raiseFractionSet(recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.3 }]), 0)).toBe('--set workers.0.gpuMemoryUtilization=0.45');
  });

  it('up to the whole GPU when memory.limit is 1', () => {
    expect(raiseFractionSet(recipe([{ role: 'agg', gpuMemoryUtilization: 0.5 }], { memory: { limit: 1 } }), 0)).toBe('--set workers.0.gpuMemoryUtilization=1');
  });

  it('an entry already at what the limit allows cannot be raised', () => {
    expect(raiseFractionSet(recipe([{ role: 'agg', gpuMemoryUtilization: 0.9 }]), 0)).toBeNull();
    const auto = recipe([{ role: 'decode', gpuMemoryUtilization: 0.5 }, { role: 'prefill', gpuMemoryUtilization: 'auto' }]);
    expect(raiseFractionSet(auto, 1)).toBeNull();
    expect(raiseFractionSet(recipe([{ role: 'decode', gpuMemoryUtilization: 0.45 }, { role: 'prefill', gpuMemoryUtilization: 0.44 }]), 1)).toBe('--set workers.1.gpuMemoryUtilization=0.45');
  });
});

describe('which plans move KV over NIXL', () => {
  const planWith = (argv: string[]) => ({ processes: [{ argv } as never] });
  it('the connector named in --kv-transfer-config, as two words or with "="', async () => {
    const { usesNixl } = await import('../../../src/plan/nixl.js');
    expect(usesNixl(planWith(['python3', '--kv-transfer-config', '{"kv_connector":"NixlConnector","kv_role":"kv_both"}']))).toBe(true);
    expect(usesNixl(planWith(['python3', '--kv-transfer-config={"kv_connector":"NixlConnector"}']))).toBe(true);
    expect(usesNixl(planWith(['python3', '--kv-transfer-config', '{"kv_connector":"LMCacheConnectorV1"}']))).toBe(false);
    expect(usesNixl(planWith(['python3', '--kv-transfer-config']))).toBe(false);
    expect(usesNixl(planWith(['python3', '--note', 'Nixl']))).toBe(false);
  });
});
