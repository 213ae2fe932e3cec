import type { LostProcess } from './losses.js';
import type { RunRecord, RunStatus } from './types.js';

// A run as the commands that judge it see it (doctor, teardown, status): its record, its status
// now, what of it is alive. Built by state.ts; a type only.

/** The run doctor inspects: the live run, or the one named by --run, or the latest. */
export interface RunView {
  record: RunRecord;
  status: RunStatus;
  /** True when its supervisor or processes are alive (a live run owns its ports, GPU memory, pids). */
  live: boolean;
  /**
   * Pids the run owns, alive now: its supervisor and its live processes with their engine
   * descendants. What is left of a lost process (an engine that outlived its worker) is in `lost`.
   */
  pids: number[];
  /** Of those, the ones found only by the run's marker in their environment (no record names them). */
  marked?: number[];
  /**
   * Its live supervisor is stopping it (record `stopping`, supervisor alive: liveness.ts
   * supervisorStopping). False when that supervisor died mid-stop: the record still says
   * `stopping` and nothing stops the run. Absent (a view built elsewhere): no such claim.
   */
  stopping?: boolean;
  /** Planned processes the live run has lost (losses.ts); empty for a run that is not live. */
  lost: LostProcess[];
  /** Live pids an earlier stop of it could not end with SIGKILL (RunRecord.survivors); absent: none known. */
  survivors?: number[];
  logsDir: string;
}
