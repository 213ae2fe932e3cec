import { markedProcesses, markerFor } from './run-scan.js';
import { unreadableRecords } from './state.js';

// A run whose run.json cannot be read (replaced by a directory, cut short, unreadable) may still be
// live: its processes carry its run marker. status and teardown name its record and what carries
// the marker instead of saying there is no run.

export interface UnreadableRun {
  id: string;
  /** The run.json that could not be read, and why. */
  path: string;
  reason: string;
  /** Live processes of ours carrying the run's marker. */
  pids: number[];
}

/**
 * The unreadable records listRuns/loadRuns met in this state dir that hide something live: each with
 * what carries its marker. One with nothing live is only the warning that skipped it.
 */
export async function unreadableRuns(stateDir: string): Promise<UnreadableRun[]> {
  const all = await Promise.all(unreadableRecords(stateDir).map(async (u) => ({
    ...u,
    pids: (await markedProcesses(markerFor(stateDir, u.id), 0)).map((s) => s.pid).filter((pid) => pid !== process.pid),
  })));
  return all.filter((u) => u.pids.length > 0);
}

/** Pure: the one line that says so. */
export function unreadableLine(u: UnreadableRun, stopped = false): string {
  const n = u.pids.length;
  const who = n === 0
    ? 'no live process carries its run marker'
    : `${n} live process${n === 1 ? '' : 'es'} carr${n === 1 ? 'ies' : 'y'} its run marker (pid ${u.pids.join(', ')})${stopped ? '' : ': stop them with dynamo-dev teardown'}`;
  return `run ${u.id}: its record ${u.path} cannot be read (${u.reason}); ${who}`;
}
