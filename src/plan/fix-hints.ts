import type { Recipe } from '../recipe/schema.js';
import { autoShare, expandWorkers, fractionTotals } from './workers.js';

// `--set` suggestions that work for the recipe at hand (a fix line must be a command the user can
// run: CLI.md; test/e2e/fix-lines.test.ts runs each through `up --dry-run`). Pure.

const floor2 = (x: number) => Math.floor(x * 100 + 1e-9) / 100;

/** Which entry of recipe.workers a planned worker comes from (agg-1 is the second agg replica). */
export function workerEntryOf(recipe: Recipe, name: string): number | null {
  return expandWorkers(recipe).find((w) => w.name === name)?.entry ?? null;
}

/** The resolved fraction of each worker entry ("auto" split as the plan splits it), one per replica. */
function fractions(recipe: Recipe): number[] {
  const each = autoShare(recipe.memory.limit, fractionTotals(expandWorkers(recipe)));
  return recipe.workers.map((w) => (w.gpuMemoryUtilization === 'auto' ? each : w.gpuMemoryUtilization));
}

/**
 * `--set` arguments that make the workers' fractions add up to at most `fits`: scaled down
 * together (each replica of an entry gets the same), explicit and "auto" ones alike. Empty when
 * nothing sensible fits (a fraction would round to 0).
 */
export function fitFractionSets(recipe: Recipe, fits: number): string[] {
  const cur = fractions(recipe);
  const total = recipe.workers.reduce((s, w, i) => s + cur[i] * w.replicas, 0);
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: fractions are > 0, so total is; a fits <= 0 scales every fraction to <= 0, which the check below refuses the same way
  if (total <= 0 || fits <= 0) return [];
  const k = Math.min(1, fits / total);
  const next = cur.map((f) => floor2(f * k));
  if (next.some((f) => f <= 0)) return [];
  return next.flatMap((f, i) => (f === cur[i] && recipe.workers[i].gpuMemoryUtilization !== 'auto' ? [] : [`--set workers.${i}.gpuMemoryUtilization=${f}`]));
}

/**
 * The highest fraction entry `i` can be given while all fractions stay within memory.limit; null
 * when it cannot be raised (already at the limit).
 */
export function highestFraction(recipe: Recipe, i: number): number | null {
  const cur = fractions(recipe);
  const others = recipe.workers.reduce((s, w, j) => s + (j === i ? 0 : cur[j] * w.replicas), 0);
  const best = floor2((recipe.memory.limit - others) / recipe.workers[i].replicas);
  // Stryker disable next-line ConditionalExpression: best <= 1 always holds: memory.limit is at most 1 (schema) and the other workers' shares are > 0, so best <= limit <= 1
  return best > cur[i] + 1e-9 && best <= 1 ? best : null;
}

/** `--set workers.i.gpuMemoryUtilization=F` for the highest fraction entry `i` can be given; null when it cannot be raised. */
export function raiseFractionSet(recipe: Recipe, i: number): string | null {
  const best = highestFraction(recipe, i);
  return best === null ? null : `--set workers.${i}.gpuMemoryUtilization=${best}`;
}
