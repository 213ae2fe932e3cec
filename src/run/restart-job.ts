import type { TimerHandle } from './clock.js';
import type { RestartEvent } from './restart-request.js';
import type { RestartDone } from './supervisor-types.js';
import type { RestartEntry } from './types.js';

// One restart under way, as the process it restarts holds it (process-lifecycle.ts) and the restart
// machinery drives it (process-restart.ts): a file of its own so neither imports the other.

export interface RestartJob {
  /** stopping: its exit is the restart's own; starting: an exit means it did not come back; ending: given up, being stopped. */
  phase: 'stopping' | 'starting' | 'ending';
  /** The readiness polls of the new start (aborted once it ends either way). */
  abort: AbortController;
  deadline: TimerHandle | null;
  t0: number;
  /** What run.json keeps of this restart (its outcome set at the end). */
  entry: RestartEntry;
  note: (e: RestartEvent) => void;
  settle: (e: RestartDone) => void;
}
