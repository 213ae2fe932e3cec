import type { UpEvent } from './events.js';
import type { ProcessLifecycle } from './process-lifecycle.js';
import type { RunWriter } from './run-writer.js';
import type { StopHandle, StopSnapshot } from './stop.js';
import type { SupervisorDeps } from './supervisor-deps.js';
import type { Failure, SupervisorOptions } from './supervisor-types.js';
import type { RunRecord, RunState } from './types.js';

// What the modules of a supervision share (the Supervisor holds it): the run's options, the
// machine, its record and writer, its processes, and where the run stands. The restart
// (process-restart.ts), the stop (run-stop.ts) and the deaths (run-deaths.ts) act on it; only the
// Supervisor creates one.

export interface RunCore {
  readonly o: SupervisorOptions;
  readonly d: SupervisorDeps;
  readonly record: RunRecord;
  readonly writer: RunWriter;
  readonly procs: ProcessLifecycle[];
  /** The run marker every child inherits: what a stop must not leave alive. */
  readonly marker: string;
  /** Aborts the run's readiness polls (stop, failure, detach, watching). */
  readonly abort: AbortController;
  /** Stopping, failed or detached: no more transitions, no new starts. */
  finishing: boolean;
  /** The run was ready once: a death after that is judged so. */
  everReady: boolean;
  /** Ready and watching (detached): deaths are recorded, not fatal. */
  watching: boolean;
  /** A second signal asked for SIGKILL now; `escalatedBy` the signal. */
  escalated: boolean;
  escalatedBy: NodeJS.Signals | undefined;
  /** The stop under way (escalatable). */
  stopHandle: StopHandle | null;
  /** Why the run is being stopped, and who asked (teardown's note). */
  stopWhy: { reason: 'user' | 'failure' | 'teardown'; by: string | null };
  emitEvent(e: UpEvent): void;
  /** The stop's state after the first SIGTERMs and whenever a target changes phase. */
  stopProgress(snap: StopSnapshot): void;
  warn(text: string): void;
  setRunState(state: RunState): void;
  /** The run failed: stop everything, report why. */
  fail(f: Failure): Promise<void>;
  /** A user stop (a signal, teardown). */
  stop(signal: string): Promise<void>;
  clearTimers(): void;
  refreshDescendants(persist: boolean): void;
  frontend(): ProcessLifecycle | undefined;
}
