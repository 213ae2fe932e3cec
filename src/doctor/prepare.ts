import { join } from 'node:path';
import { loadRecipe } from '../host/files/recipes.js';
import { buildPlan } from '../plan/build.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import type { RunView } from '../run/run-view.js';

export interface DoctorTarget {
  recipe: Recipe;
  plan: Plan;
  /** Where the recipe came from, for the report header. */
  source: string;
  /** Judged for want of a GPU: the header then names both ways to run without one (ways-without-gpu.ts). */
  noGpu?: true;
}

/**
 * Which recipe and plan the plan-dependent checks judge (CLI.md): --recipe, else the run named by
 * --run (live or not: "inspect that run" means its recipe too), else the live run's (its recorded
 * plan: the ports and fractions it really uses), else the built-in `agg`.
 */
export async function resolveDoctorTarget(o: {
  recipeRef?: string;
  /** --set PATH=VALUE on that recipe. */
  sets?: string[];
  /** The run named by --run (explicit), else the live run. */
  run: RunView | null;
  stateDir: string;
  python?: string;
  /** Where python came from when `dynamo-dev setup` made it: recorded in the plan (python.env's fix names setup, never pip into it). */
  pythonFrom?: NonNullable<Plan['python']>;
  /** No nvidia-smi on PATH: without --recipe or a run, the mocker recipe is judged. */
  noGpu?: boolean;
}): Promise<DoctorTarget> {
  if (o.recipeRef) {
    const recipe = await loadRecipe(o.recipeRef, o.sets);
    return { recipe, plan: planFor(recipe, o.stateDir, o.python, o.recipeRef, o.pythonFrom), source: o.recipeRef };
  }
  if (o.run) {
    const rec = o.run.record;
    const recipe = rec.recipeSpec ?? (await loadRecipe(rec.recipe).catch(() => null));
    if (recipe) return { recipe, plan: rec.plan, source: `${rec.recipe} (run ${rec.id}${o.run.live ? '' : `, ${o.run.status}`})` };
  }
  // No GPU here (issue 31): the recipe this machine can run, the mocker's; judging `agg` there said
  // '3 failed' with fixes to install vLLM into the system Python and fetch a model from the hub.
  if (o.noGpu) {
    const recipe = await loadRecipe('mocker');
    return { recipe, plan: planFor(recipe, o.stateDir, o.python, 'mocker', o.pythonFrom), source: 'mocker (no GPU here; --recipe agg judges the GPU one)', noGpu: true };
  }
  const recipe = await loadRecipe('agg');
  return { recipe, plan: planFor(recipe, o.stateDir, o.python, 'agg', o.pythonFrom), source: 'agg (default)' };
}

/** The runs doctor knows of: the user's own live run, the one --run names, the newest recorded. */
export interface DoctorRuns {
  /** The newest of the user's own live runs. */
  live: RunView | null;
  /** Every live run of the user's own, newest first (`up --name` runs side by side). */
  lives: RunView[];
  /** Every live run of the state dir, whoever runs it: the ports `up --name` moves past (commands/up.ts). */
  allLive: RunView[];
  byId: RunView | null;
  latest: RunView | null;
}

/** Why the log checks judge no logs, and what to say about it. */
export interface NoLogs {
  /** `warn` only for a run that failed within RECENT_MS: the user likely wants to know why. */
  status: 'skip' | 'warn';
  summary: string;
  fix: string | null;
}

/** How long after it ended a failed run is still worth a warning when doctor runs without --run. */
export const RECENT_MS = 10 * 60_000;

const ageText = (ms: number) => (ms < 60_000 ? `${Math.max(1, Math.round(ms / 1000))} s` : ms < 2 * 3_600_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 3_600_000)} h`);

/**
 * Pure: whose logs the log checks (kv.events, kv.allocated, logs.errors) judge. --run: that run.
 * Else the live run, unless --recipe names another recipe (a recipe is never judged by another
 * recipe's logs). Else none: an old run's logs are not the machine's state now; a run that
 * failed within the last minutes is named in a warning, any other recent run in the skip line.
 */
export function chooseLogRun(o: { runs: Pick<DoctorRuns, 'live' | 'byId' | 'latest'>; runId?: string; recipeName?: string; now: number }): { run: RunView | null; none: NoLogs | null } {
  if (o.runId) return { run: o.runs.byId, none: null };
  const live = o.runs.live;
  if (live?.live) {
    if (o.recipeName && live.record.recipe !== o.recipeName) {
      return {
        run: null,
        none: {
          status: 'skip',
          summary: `the live run ${live.record.id} runs ${live.record.recipe}, not ${o.recipeName}: its logs are not judged against ${o.recipeName}`,
          fix: `judge the live run: dynamo-dev doctor (without --recipe) or dynamo-dev doctor --run ${live.record.id}`,
        },
      };
    }
    return { run: live, none: null };
  }
  const latest = o.runs.latest;
  const how = '`dynamo-dev up` starts one; --logs PATH judges log files';
  if (!latest) return { run: null, none: { status: 'skip', summary: `no live run: no logs to judge (${how})`, fix: null } };
  const endedMs = o.now - Date.parse(latest.record.updatedAt);
  const age = Number.isFinite(endedMs) ? ` ${ageText(Math.max(0, endedMs))} ago` : '';
  const judgeIt = `dynamo-dev doctor --run ${latest.record.id}`;
  if (latest.status === 'failed' && Number.isFinite(endedMs) && endedMs <= RECENT_MS) {
    return {
      run: null,
      none: { status: 'warn', summary: `no live run; the latest run ${latest.record.id} (${latest.record.recipe}) failed${age}: its logs are not judged here`, fix: `see why: \`${judgeIt}\`, or \`dynamo-dev diagnose --run ${latest.record.id}\`` },
    };
  }
  return {
    run: null,
    none: { status: 'skip', summary: `no live run: no logs to judge (the latest run ${latest.record.id} ${latest.status}${age}: \`${judgeIt}\` judges it; ${how})`, fix: null },
  };
}

/** A plan that cannot fit (fractions over the limit) is an input error naming the recipe: exit 2, as for `up`. */
export function planFor(recipe: Recipe, stateDir: string, python: string | undefined, source: string, pythonFrom?: NonNullable<Plan['python']>): Plan {
  return buildPlan({ recipe, runDir: join(stateDir, 'runs', '<next>'), python, source, ...(pythonFrom ? { pythonFrom } : {}) });
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
  const foreign = runPids(view).filter((pid) => uids.has(pid) && uids.get(pid) !== self);
  if (foreign.length === 0) return view;
  return { ...view, live: false, pids: [], lost: [] };
}

/** Every live pid of a run: its own and what is left of the processes it lost. */
export const runPids = (view: RunView): number[] => [...view.pids, ...(view.lost ?? []).flatMap((x) => x.leftPids)];
