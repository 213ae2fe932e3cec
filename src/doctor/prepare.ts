import { join } from 'node:path';
import { loadRecipe } from '../host/recipes.js';
import { buildPlan } from '../plan/build.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import type { RunView } from './types.js';

export interface DoctorTarget {
  recipe: Recipe;
  plan: Plan;
  /** Where the recipe came from, for the report header. */
  source: string;
}

/**
 * Which recipe and plan the plan-dependent checks judge (CLI.md): --recipe, else the live run's
 * (its recorded plan: the ports and fractions it really uses), else the built-in `agg`.
 */
export async function resolveDoctorTarget(o: {
  recipeRef?: string;
  run: RunView | null;
  stateDir: string;
  python?: string;
}): Promise<DoctorTarget> {
  if (o.recipeRef) {
    const recipe = await loadRecipe(o.recipeRef);
    return { recipe, plan: planFor(recipe, o.stateDir, o.python, o.recipeRef), source: o.recipeRef };
  }
  if (o.run?.live) {
    const rec = o.run.record;
    const recipe = rec.recipeSpec ?? (await loadRecipe(rec.recipe).catch(() => null));
    if (recipe) return { recipe, plan: rec.plan, source: `run ${rec.id}` };
  }
  const recipe = await loadRecipe('agg');
  return { recipe, plan: planFor(recipe, o.stateDir, o.python, 'agg'), source: 'agg (default)' };
}

/** A plan that cannot fit (fractions over the limit) is an input error naming the recipe: exit 2, as for `up`. */
function planFor(recipe: Recipe, stateDir: string, python: string | undefined, source: string): Plan {
  return buildPlan({ recipe, runDir: join(stateDir, 'runs', '<next>'), python, source });
}

/**
 * A live run counts as ours only when its processes run as us. A state directory shared with
 * another user (DYNAMO_DEV_HOME on a team machine, `sudo -E dynamo-dev up`) can hold their live
 * run; taking it for ours would pass their engines as "the live run", their ports as "held by the
 * live run" and their GPU memory as available to us. Such a run is judged as not live: its
 * processes are then reported like any other user's. Pure.
 */
export function ownRunView(view: RunView | null, uids: ReadonlyMap<number, number>, self: number | null): RunView | null {
  if (!view || !view.live || self === null) return view;
  const foreign = view.pids.filter((pid) => uids.has(pid) && uids.get(pid) !== self);
  if (foreign.length === 0) return view;
  return { ...view, live: false, pids: [] };
}
