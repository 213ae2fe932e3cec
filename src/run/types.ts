import type { Plan, ProcessRole } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';

// run.json: written before the first spawn and after every state change, so a supervisor
// killed with SIGKILL still leaves everything findable by status and teardown.

export type ProcessState =
  | 'waiting' // for a predecessor's KV line
  | 'starting' // spawned, nothing useful logged yet
  | 'loading' // model loading / engine start logged
  | 'kv-allocated' // KV cache size logged
  | 'ready' // health endpoint ready (frontend: model listed)
  | 'exited' // ended on its own
  | 'failed' // ended with an error, or never got ready in time
  | 'stopped' // stopped by us
  | 'gone'; // found gone by a command while nothing watched it: how it ended is unknown

export interface DescendantRecord {
  pid: number;
  startTicks: number | null;
  cmd: string;
}

export interface ProcessRecord {
  name: string;
  role: ProcessRole;
  pid: number | null;
  /** Equals pid: every child leads its own process group. */
  pgid: number | null;
  /** Clock ticks since boot from /proc/PID/stat: the pid-reuse guard. */
  startTicks: number | null;
  startedAt: string | null;
  argv: string[];
  env: Record<string, string>;
  ports: Record<string, number>;
  gpuMemoryUtilization: number | null;
  state: ProcessState;
  kvTokens: number | null;
  exitCode: number | null;
  signal: string | null;
  log: string;
  /** Engine processes (VLLM::*) seen under this process while it ran. */
  descendants: DescendantRecord[];
  /** When it ended, as its supervisor saw it (exit code and signal above). */
  endedAt?: string | null;
  /** When a command found it gone with no supervisor to tell how it ended (state `gone`). */
  noticedGoneAt?: string | null;
  /** Its log's diagnosis when it ended (the signature table's root cause), null when nothing known matched. */
  diagnosis?: EndDiagnosis | null;
  /** A download lock it was seen waiting on while coming up, and its holder (absent: none seen). */
  lockWait?: { lockPath: string; holderPid: number | null; holderCmd: string | null; at: string } | null;
  /** How often `dynamo-dev restart` started it again, and when last (absent: never). */
  restarts?: number;
  restartedAt?: string | null;
  /**
   * What its supervisor's stop of the run sent it (absent: that stop signalled nothing: it had
   * ended before, or no such stop yet). teardown reads it: a process the supervisor stopped on
   * teardown's behalf is credited so, not reported "already gone".
   */
  stop?: { signal: 'SIGTERM' | 'SIGKILL'; ms: number } | null;
  /** Each time it was started again, oldest first (absent: never): by `up --restart` or `dynamo-dev restart`. */
  restartHistory?: RestartEntry[];
  /** Why `up --restart` will not (or did not) restart it again: the limit reached, a restart that did not come back. */
  restartsEnded?: { at: string; reason: string } | null;
  /** `up --restart` waits this long before starting it again (a crash loop's back-off), until `at` (absent or null: no wait). */
  restartBackoff?: { delayMs: number; at: string; upMs: number } | null;
}

/** `up --restart on-failure[:N]` (policy/restart-policy.ts parses and applies it). */
export interface RestartPolicy {
  mode: 'on-failure';
  /** At most this many restarts per worker; null: no limit. */
  max: number | null;
}

/** One restart of a process, as run.json keeps it. */
export interface RestartEntry {
  /** When it was started again (ISO). */
  at: string;
  /** `on-failure`: the run's supervisor, by `up --restart`; `command`: `dynamo-dev restart`. */
  by: 'on-failure' | 'command';
  /** How it had ended ('was killed by SIGKILL', 'exited with code 1'); null: it was running (a command's restart). */
  cause: string | null;
  exitCode: number | null;
  signal: string | null;
  /** Its log's diagnosis code then, if any. */
  diagnosis: string | null;
  /** ready: counted again; failed: it did not come back (`reason`); null: in progress. */
  outcome: 'ready' | 'failed' | null;
  reason?: string;
}

/** The diagnosis kept in run.json for a process that ended (src/run/diagnosis.ts Diagnosis, minus the long texts). */
export interface EndDiagnosis {
  code: string;
  title: string;
  text: string;
  file: string;
  line: number;
}

/**
 * A process a stop could not end: it outlived SIGKILL (D state: uninterruptible I/O, a hung GPU
 * driver call). Kept as the run's (pid and start ticks, as its other pids) until it is gone, so
 * status shows it and teardown tries it again; never signalled once its start ticks differ.
 */
export interface SurvivorRecord {
  /** The process of the run it belongs to (`agg-0`), or the name a stop gave a pid no process names. */
  name: string;
  pid: number;
  startTicks: number;
  cmd: string;
  /** When the stop gave up on it (ISO). */
  at: string;
}

/** `degraded`: was ready, then lost a process; its supervisor keeps watching the rest. */
export type RunState = 'starting' | 'ready' | 'degraded' | 'stopping' | 'stopped' | 'failed';

export interface RunRecord {
  id: string;
  /** `up --name`: what commands' `--run` also accept; several named runs live side by side. */
  name?: string;
  recipe: string;
  /** The validated recipe the run was started from (doctor judges a live run against it). */
  recipeSpec?: Recipe;
  model: string;
  createdAt: string;
  updatedAt: string;
  /** `requests`: what it answers besides stop (`restart`: restart-request.ts); absent in runs of older versions. */
  /** `pidNamespace`: the supervisor's (/proc/self/ns/pid): its pids mean nothing in another one. `markedSince`: start ticks of the `up` whose probes of the interpreter already carried the run marker (before the supervisor started). */
  supervisor: { pid: number; startTicks: number | null; detached: boolean; requests?: string[]; markedSince?: number; pidNamespace?: string };
  /** /proc/sys/kernel/random/boot_id when the run started: a record of another boot has nothing alive. */
  bootId?: string | null;
  state: RunState;
  /** While `stopping`: when its supervisor SIGKILLs what has not ended on SIGTERM (ISO; now once escalated). */
  stopKillAt?: string | null;
  frontendUrl: string;
  plan: Plan;
  processes: ProcessRecord[];
  /** `up --restart on-failure[:N]`: the policy its supervisor restarts workers by (absent: none). */
  restartPolicy?: RestartPolicy | null;
  /** What the last stop (the supervisor's or teardown's) left alive after SIGKILL; absent or empty: nothing. */
  survivors?: SurvivorRecord[];
}

/**
 * What status reports: `orphaned` when the supervisor is gone but processes live; `degraded` when a
 * live run lost a planned process (exited, killed, never started) or an engine outlived its worker.
 */
export type RunStatus = 'starting' | 'ready' | 'degraded' | 'stopped' | 'failed' | 'orphaned';
