import { flagValue } from './argv.js';

// How many workers a run should show its frontend (doctor's frontend.models, bench's gates). Pure.

/** A process of a plan or of a run record: its role and its command line. */
interface PlannedLike {
  role: string;
  argv?: readonly string[];
}

/**
 * Workers the frontend should count for this run: one per planned worker process, times the
 * mocker's --num-workers (each of its workers registers on its own). Null when the record has no
 * plan to count from.
 */
export function plannedWorkers(rec: { processes: readonly PlannedLike[]; plan?: { processes: readonly PlannedLike[] } }): number | null {
  const procs = rec.plan?.processes ?? rec.processes;
  if (!procs?.length) return null;
  return procs.filter((p) => p.role !== 'frontend').reduce((n, p) => {
    const each = Number(flagValue(p.argv ?? [], '--num-workers'));
    return n + (Number.isInteger(each) && each > 0 ? each : 1);
  }, 0);
}
