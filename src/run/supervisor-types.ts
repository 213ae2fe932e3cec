import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import type { Diagnosis } from './diagnosis.js';
import type { RestartPolicy } from './policy/restart-policy.js';
import type { FailureReport } from './policy/failure.js';
import type { RestartEvent } from './restart-request.js';
import type { EndDiagnosis } from './types.js';

// What a supervision is asked (SupervisorOptions) and what it ends with (SupervisorResult): shared
// by the Supervisor, the modules it coordinates, detached.ts and start-run.ts.

export interface SupervisorOptions {
  plan: Plan;
  /** Recorded in run.json so doctor judges the live run by the recipe it really runs. */
  recipe?: Recipe;
  runId: string;
  stateDir: string;
  /** The user's environment; each process gets it plus the plan's env. */
  env: NodeJS.ProcessEnv;
  readyTimeoutMs: number;
  graceMs: number;
  detach: boolean;
  /** Install SIGINT/SIGTERM/SIGHUP handlers (off in tests that drive stop() themselves). */
  handleSignals?: boolean;
  /** HTTP readiness poll interval (default 50 ms). */
  pollMs?: number;
  /** How often engine descendants are re-scanned while starting (default 2000 ms; every 30 s once ready). */
  descendantsMs?: number;
  /** The run marker's value every child inherits (RUN_MARKER; default the run's directory). */
  runMarker?: string;
  /**
   * Start ticks of the `up` that planned the run: its probes of the interpreter carried the marker
   * from then, before this supervisor started (recorded as supervisor.markedSince).
   */
  markedSinceTicks?: number | null;
  /** The log followers' fallback poll (default 1000 ms; fs.watch delivers lines at once). */
  followPollMs?: number;
  /** How often the model's download locks are looked at while a worker comes up silent (default 1000 ms). */
  lockProbeMs?: number;
  /** How long a worker must be silent before a held lock counts as its wait (default 2000 ms). */
  lockSilentMs?: number;
  /**
   * With `detach`: keep supervising once ready instead of returning (the background supervisor of
   * `up --detach`, src/run/detached-main.ts). A process that ends is recorded with its exit code,
   * signal, time and diagnosis, the run becomes `degraded`, the others keep running; it returns
   * when stopped (teardown signals it) or when every process has ended.
   */
  watch?: boolean;
  /** `up --name`: recorded so commands find the run by it. */
  name?: string;
  /** `up --restart on-failure[:N]`: workers that die after the run was ready are started again. */
  restart?: RestartPolicy | null;
}

/** What `up` decides of a supervision; foreground or background (`--detach`) is the supervisor's own business. */
export type SupervisionOptions = Omit<SupervisorOptions, 'detach' | 'watch' | 'handleSignals'>;

export type SupervisorResult =
  | { outcome: 'detached'; code: 0 }
  /** `beforeReady`: the stop interrupted the start (up exits 130 then). */
  | { outcome: 'stopped'; code: 0 | 1; signal: string; beforeReady: boolean }
  | { outcome: 'failed'; code: 1; reason: string };

/** The end of one restart, as the command that asked is told. */
export type RestartDone = Extract<RestartEvent, { event: 'done' }>;

export interface Failure extends FailureReport {
  /** undefined: diagnose the blamed process's log; null: nothing to diagnose. */
  diagnosis?: Diagnosis | null;
}

/** What run.json keeps of a diagnosis (the long explanation and fix are the signature table's). */
export function endDiagnosis(d: Diagnosis | null): EndDiagnosis | null {
  return d ? { code: d.code, title: d.title, text: d.text, file: d.file, line: d.line } : null;
}

/** Less room than this where the run's record lives: a start would fail to name its pids (1 MiB; logs need room too). */
export const MIN_FREE_BYTES = 1024 * 1024;
