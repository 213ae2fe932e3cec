import { UserError } from '../errors.js';
import { listRuns, readRun } from './state.js';
import type { RunRecord } from './types.js';

/** The run a command reads by default: --run ID, else the latest recorded (logs, diagnose). */
export async function pickRun(stateDir: string, id: string | undefined, what: string): Promise<RunRecord> {
  if (id) return readRun(stateDir, id);
  const [latest] = await listRuns(stateDir);
  if (!latest) throw new UserError(`no runs recorded in ${stateDir}, so no ${what}`, 'dynamo-dev up [RECIPE]');
  return latest;
}
