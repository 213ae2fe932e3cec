import type { RunView } from './run-view.js';
import { UserError } from '../errors.js';
import { findRunView, listRuns, liveAndRecentViews, readRun } from './state.js';
import type { RunRecord } from './types.js';

// Which run a command means, said once. --run ID|NAME always names one run (an unknown one is the
// user's error, exit 2). Without it, by what the command does with the run:
//   reads what a run left (logs, diagnose)          -> the latest recorded run, live or not (latestRun)
//   acts on a live run (restart)                     -> the one live run; none, or several, is the
//                                                      user's error naming them (theLiveRun)
//   judges or probes beside live runs (doctor, probe) -> the newest live run, else the latest one
//                                                      (newestRun; doctor names the others)
//   starts a run (up)                                -> none: refused while a run is live unless each
//                                                      run has a name, and while a run of the same
//                                                      name is live (refuseLiveRuns)
//   starts its own runs (bench)                      -> none: refused while any run is live (refuseLiveRuns)

/** --run ID|NAME, else the latest recorded run. */
export async function latestRun(stateDir: string, ref: string | undefined, what: string): Promise<RunRecord> {
  if (ref) return readRun(stateDir, ref);
  const [latest] = await listRuns(stateDir);
  if (!latest) throw new UserError(`no runs recorded in ${stateDir}, so no ${what}`, 'dynamo-dev up [RECIPE]');
  return latest;
}

/** --run ID|NAME, else the one live run. `command`, `process`: for the fix a refusal prints. */
export async function theLiveRun(stateDir: string, ref: string | undefined, o: { command: string; process: string }): Promise<RunRecord> {
  if (ref) return readRun(stateDir, ref);
  const live = (await liveAndRecentViews(stateDir, 1)).filter((v) => v.live);
  if (live.length === 0) throw new UserError(`no live run in ${stateDir}: nothing to ${o.command}`, 'dynamo-dev status');
  if (live.length > 1) {
    throw new UserError(
      `${o.command}: ${live.length} runs are live (${live.map((v) => v.record.name ?? v.record.id).join(', ')}); say which with --run ID|NAME`,
      `dynamo-dev ${o.command} ${o.process} --run ${live[0].record.name ?? live[0].record.id}`,
    );
  }
  return live[0].record;
}

/** --run ID|NAME, else the newest live run, else the latest recorded (null: none). */
export const newestRun = (stateDir: string, ref?: string): Promise<RunView | null> => findRunView(stateDir, ref);

/**
 * doctor's runs from one scan of the state directory: the live ones and the newest recorded
 * (`views`, newest first; never the whole history), and the run --run names (`byId`; an unknown
 * one is the user's error naming the recorded runs). doctor judges --run's, else the newest live,
 * and names the other live runs.
 */
export async function runsToJudge(stateDir: string, ref?: string): Promise<{ views: RunView[]; byId: RunView | null }> {
  const views = await liveAndRecentViews(stateDir, 1);
  const byId = ref ? views.find((v) => v.record.id === ref) ?? (await findRunView(stateDir, ref)) : null;
  return { views, byId };
}

/** The live runs of the state directory (newest first). */
export async function liveRuns(stateDir: string): Promise<RunView[]> {
  return (await liveAndRecentViews(stateDir, 1)).filter((v) => v.live);
}

/**
 * A new run beside the live ones: `up` without a name refuses any live run (one up per state
 * directory unless each run has a name), with a name a live run of that name; `bench` (starts its
 * own runs, `for: 'bench'`) refuses any live run.
 */
export function refuseLiveRuns(lives: readonly RunView[], o: { name?: string; recipeRef: string; for?: 'up' | 'bench' }): void {
  const live = lives[0];
  if (o.for === 'bench') {
    if (live) throw new UserError(`another run is live: run ${live.record.id} (${live.status}); bench starts its own runs`, `dynamo-dev teardown --run ${live.record.id}`);
    return;
  }
  if (!o.name && live) {
    throw new UserError(
      `another run is live: run ${live.record.id}${live.record.name ? ` (${live.record.name})` : ''} (${live.status}); one up per state directory unless each run has a name`,
      `dynamo-dev up ${o.recipeRef} --name NAME   (a second run beside it, with ports of its own), or dynamo-dev teardown --run ${live.record.name ?? live.record.id}`,
    );
  }
  const same = lives.find((v) => v.record.name === o.name);
  if (o.name && same) {
    throw new UserError(`--name: a run named ${o.name} is live (${same.record.id}, ${same.status}); choose another name`, `dynamo-dev teardown --run ${o.name}`);
  }
}
