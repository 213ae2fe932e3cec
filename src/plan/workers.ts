import type { Recipe, WorkerSpec } from '../recipe/schema.js';

// A recipe's worker entries as the planned worker processes they become. Pure, never throws: plans
// (build.ts) and the `--set` hints for a recipe (fix-hints.ts) name and size workers the same way.

export interface WorkerSlot {
  spec: WorkerSpec;
  /** Index of its entry in recipe.workers (what `--set workers.N.…` addresses). */
  entry: number;
  /** agg-0, agg-1, prefill-0, ...: numbered per role across entries. */
  name: string;
}

/** One slot per replica, in recipe order. */
export function expandWorkers(recipe: Recipe): WorkerSlot[] {
  const counters: Record<string, number> = {};
  const out: WorkerSlot[] = [];
  recipe.workers.forEach((spec, entry) => {
    for (let r = 0; r < spec.replicas; r++) {
      const n = counters[spec.role] ?? 0;
      counters[spec.role] = n + 1;
      out.push({ spec, entry, name: `${spec.role}-${n}` });
    }
  });
  return out;
}

/** The explicit fractions summed over every replica, and how many replicas say "auto". */
export function fractionTotals(slots: readonly WorkerSlot[]): { explicit: number; autos: number } {
  let explicit = 0;
  let autos = 0;
  for (const { spec } of slots) {
    if (spec.gpuMemoryUtilization === 'auto') autos++;
    else explicit += spec.gpuMemoryUtilization;
  }
  return { explicit, autos };
}

/**
 * What each "auto" replica gets: memory.limit minus the explicit fractions, split evenly, floored to
 * 2 decimals so the sum never exceeds the limit by rounding. 0 without auto replicas (and <= 0 when
 * nothing is left, which build.ts refuses).
 */
export function autoShare(limit: number, t: { explicit: number; autos: number }): number {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: with no auto worker, each is never used (every fraction is explicit)
  return t.autos > 0 ? Math.floor(((limit - t.explicit) / t.autos) * 100) / 100 : 0;
}
