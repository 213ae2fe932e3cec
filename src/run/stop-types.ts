import type { DescendantRecord, ProcessRecord } from './types.js';
import type { ProofKind } from './run-marker-proof.js';

// What a stop is given (targets: a process group, or one pid) and what it tells (each target's
// result, what survived SIGKILL, its state while it runs): shared by stop.ts, the supervisor's
// stop and teardown.

export interface StopTarget {
  name: string; pid: number; pgid: number; startTicks: number | null;
  /** Engine processes recorded while running (VLLM::*), checked and killed too if they survive the group. */
  descendants?: DescendantRecord[];
  /** Signal only this pid (and its descendants), never its group: for processes whose group is not ours
   *  (a supervisor started from a shell, a leftover engine process). */
  single?: boolean;
  /** Signalled only once the live pid proves to be the run's by its run marker (run-marker-proof.ts):
   *  teardown's targets; absent for the supervisor's own children (it spawned them). */
  proof?: { marker: string; as: ProofKind };
}
/** Pure: a target per started process of a run record (teardown and the supervisor alike). A leader
 *  that already exited may have left its group behind (an engine outliving a crashed worker): the
 *  stop follows the group while any member lives. */
export function processTargets(processes: readonly ProcessRecord[]): StopTarget[] {
  return processes
    .filter((p): p is ProcessRecord & { pid: number } => p.pid !== null) // never started
    .map((p) => ({ name: p.name, pid: p.pid, pgid: p.pgid ?? p.pid, startTicks: p.startTicks, descendants: p.descendants ?? [] }));
}

/** The note of a target that had ended before the stop looked at it (nothing signalled). */
export const ALREADY_GONE = 'already gone';

export interface StopResult {
  name: string; pid: number; signal: 'SIGTERM' | 'SIGKILL' | null; ms: number; note?: string;
  /** SIGKILL was sent early on request (a second Ctrl-C), before the grace ran out: the process was
   * still shutting down, which says nothing of whether it would have honoured SIGTERM. */
  forced?: true;
  /** The signal that asked for that early SIGKILL, when known: SIGINT a second Ctrl-C, SIGTERM
   * `dynamo-dev teardown` or a kill from elsewhere, SIGHUP the terminal closing. */
  forcedBy?: NodeJS.Signals;
  /** teardown: the run's supervisor sent the signal (its record says so), not teardown itself. */
  by?: 'supervisor';
}
export interface Survivor {
  name: string; pid: number; cmd: string;
  /** Its start time when it was given up on: how the run's record keeps it as the run's (pid-reuse guard). */
  startTicks?: number | null;
  /** Its state in /proc/PID/stat then (D: uninterruptible, stuck in the kernel, e.g. a GPU driver call). */
  state?: string | null;
}

/** One target during a stop, for a live view (issue 9: who holds up the shutdown). */
export interface StopTargetState {
  name: string;
  pid: number;
  /** terminating: SIGTERM sent, within the grace; killing: SIGKILL sent; done: nothing left (or given up). */
  phase: 'terminating' | 'killing' | 'done';
  signal: StopResult['signal'];
  /** Live pids of the target at the last scan. */
  alive: number[];
  note?: string;
  forced?: StopResult['forced'];
  forcedBy?: StopResult['forcedBy'];
}

export interface StopSnapshot {
  /** When SIGKILL is (or was) due, on the stop clock's scale. */
  killAt: number;
  /** Milliseconds until SIGKILL at the time of the snapshot; 0 once due. */
  killInMs: number;
  targets: StopTargetState[];
}
