import { closeSync, constants as fsConstants, existsSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CheckOutcome } from '../doctor/judge.js';
import type { RunView } from './run-view.js';
import { DEFAULT_GRACE_S, DEFAULT_READY_TIMEOUT_S } from '../defaults.js';
import { UserError } from '../errors.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import type { DetachedResult } from './detached.js';
import type { UpEvent } from './events.js';
import { logPath, runDir } from './paths.js';
import type { PlannedRun } from './plan-run.js';
import type { RestartPolicy } from './policy/restart-policy.js';
import { portsStillFree, preflight } from './preflight.js';
import { markerFor } from './run-scan.js';
import type { Reservation } from './port-reservations.js';
import { stopThenEscalate } from './signals.js';
import { liveRuns, refuseLiveRuns } from './which-run.js';
import type { SupervisionOptions, SupervisorResult } from './supervisor.js';

// The one way a run starts (`up` in the foreground or detached, each variant of `bench`): the
// state directory's lock, the refusal of a second run, ports beside live runs (--name), the run
// folder, preflight, then the supervisor (here, or in a background process for --detach), told as
// typed events. The caller renders them (up: terminal or NDJSON) or reads them (bench); nothing
// parses our own output back.

/** What a start tells besides the run's own events (UpEvent): said by the caller, never in NDJSON. */
export type StartEvent =
  | UpEvent
  /** `--name`: the ports this run takes beside the live runs' (before the `plan` event). */
  | { event: 'ports-beside'; line: string }
  /** Something a person should know that is no event of the run (a record that could not be written). */
  | { event: 'warning'; text: string };

export interface StartRunOptions {
  stateDir: string;
  /** The user's environment: each process gets it plus the plan's env. */
  env: NodeJS.ProcessEnv;
  /** The validated recipe (recorded in run.json; replanned with other ports beside live runs). */
  recipe: Recipe;
  /** How the user named the recipe, for the fixes a refusal prints. */
  recipeRef: string;
  /** The interpreter preflight asks. */
  python: string;
  /** `up --name`: a run of its own beside live ones. */
  name?: string;
  /** Supervised by a background process that stays after the caller exits. */
  detach: boolean;
  /** Seconds; 0: no deadline. */
  readyTimeoutS?: number;
  /** Seconds between SIGTERM and SIGKILL. */
  graceS?: number;
  restart?: RestartPolicy | null;
  /** false: --no-preflight. */
  preflight: boolean;
  /** The model's check (run before the lock), listed first in the preflight. */
  model: CheckOutcome | null;
  /** The events go to NDJSON: an interrupted preflight is also a `failed` event there. */
  json: boolean;
  onEvent(e: StartEvent): void;
  /** The supervision and the preflight: the real ones by default, fakes in unit tests. */
  deps?: Partial<StartDeps>;
}

export interface StartDeps {
  /** Supervises the run here or in a background process (--detach) until ready, stopped or failed. */
  supervise(o: SupervisionOptions, detach: boolean, emit: (e: UpEvent) => void, warn: (w: string) => void): Promise<SupervisorResult | DetachedResult>;
  preflight: typeof preflight;
  /** --no-preflight: the plan's ports alone, said only when one is taken. */
  portsFree: typeof portsStillFree;
}

const realStartDeps: StartDeps = {
  supervise: (o, detach, emit, warn) => (detach ? superviseDetached(o, emit, warn) : superviseHere(o, emit, warn)),
  preflight,
  portsFree: portsStillFree,
};

export interface StartResult {
  /** up's exit code: 0 ready (or stopped by the user after ready), 1 failed, 130 interrupted before ready. */
  code: number;
  /** The run's id (it may differ from the planned one: a taken id gets a suffix). */
  runId: string;
  /** Interrupted before ready: what to say once the view is closed (null otherwise). */
  interrupted: string | null;
}

export async function startRun(planned: PlannedRun, o: StartRunOptions): Promise<StartResult> {
  const emit = o.onEvent;
  const deps = { ...realStartDeps, ...o.deps };
  let { runId, plan } = planned;
  let recipe = o.recipe;
  // Before anything is started: the supervisor finds and stops what it started through /proc.
  (await import('./proc.js')).assertProcIsOurs();
  const { acquireUpLock, createRunDir, removeEmptyRunDir } = await import('./state.js');
  const lock = await acquireUpLock(o.stateDir, runId, o.name);
  try {
    // A detached run has no `up` holding the lock any more: its live processes refuse a second up.
    const lives = await liveRuns(o.stateDir);
    refuseLiveRuns(lives, { name: o.name, recipeRef: o.recipeRef });
    // A name that is a run's id would make `--run NAME` (teardown, restart) pick that other run.
    if (o.name && (lives.some((v) => v.record.id === o.name) || existsSync(runDir(o.stateDir, o.name)))) {
      throw new UserError(`--name: ${o.name} is the id of a run in ${o.stateDir}; --run ${o.name} would mean that run: choose another name`);
    }
    // One port choice at a time in the state directory; the ports taken are noted in our lock
    // file until the run's record names them (port-reservations.ts).
    const { withPortsLock, reservations } = await import('./port-reservations.js');
    await withPortsLock(o.stateDir, async () => {
      const reserved = reservations(o.stateDir, lock.path);
      if (o.name) {
        // Afresh: a run may have become live while we waited for the lock.
        const moved = await portsBesideOrRefuse(recipe, plan, await liveRuns(o.stateDir), reserved);
        if (moved.recipe !== recipe) {
          recipe = moved.recipe;
          plan = planned.planAt(runDir(o.stateDir, runId), recipe);
        }
        emit({ event: 'ports-beside', line: moved.line });
      } else {
        refuseReservedPorts(plan, reserved, o.recipeRef);
      }
      lock.reserve(planPorts(plan));
    });
    // Created exclusively (never through a symlink someone planted at the id); a taken id gets a suffix.
    const made = createRunDir(o.stateDir, runId);
    if (made !== runId) {
      runId = made;
      plan = planned.planAt(runDir(o.stateDir, runId), recipe);
    }
    lock.describe(runId);
    emit({ event: 'plan', runId, plan });

    // --no-preflight skips doctor's checks, never the ports: a taken one is said at once, naming its holder.
    const input = { env: planned.probeEnv, stateDir: o.stateDir, recipe, plan, python: o.python, model: o.model, json: o.json };
    const ok = o.preflight ? await deps.preflight(input, emit) : await deps.portsFree(input, emit);
    if (ok !== true) {
      removeEmptyRunDir(o.stateDir, runId); // nothing was started: no empty run left behind
      return { code: ok === 'interrupted' ? EXIT_INTERRUPTED : 1, runId, interrupted: null };
    }

    emit({ event: 'run', runId, logsDir: dirname(logPath(o.stateDir, runId, plan.processes[0]?.name ?? 'frontend')) });
    const timeoutS = o.readyTimeoutS ?? DEFAULT_READY_TIMEOUT_S;
    const options: SupervisionOptions = {
      plan, recipe, runId, stateDir: o.stateDir, env: o.env, ...(o.name ? { name: o.name } : {}),
      readyTimeoutMs: timeoutS > 0 ? Math.min(timeoutS * 1000, 2 ** 31 - 1) : 2 ** 31 - 1,
      graceMs: Math.round((o.graceS ?? DEFAULT_GRACE_S) * 1000),
      ...(o.restart ? { restart: o.restart } : {}),
      runMarker: markerFor(o.stateDir, runId),
      // The probes carried the marker from this process's start: the run's marked processes may be that old.
      markedSinceTicks: (await import('./proc.js')).readStartTicks(process.pid),
    };
    const warn = (text: string) => emit({ event: 'warning', text });
    const result = await deps.supervise(options, o.detach, emit, warn);
    // Interrupted means not done: a script's `up --detach && ./bench.sh` must not benchmark nothing.
    if (result.outcome === 'stopped' && result.beforeReady) {
      const interrupted = result.code === 0
        ? 'interrupted before ready: nothing left running'
        : 'interrupted before ready: some processes survived SIGKILL (listed above); see `dynamo-dev status`';
      return { code: result.code === 0 ? EXIT_INTERRUPTED : 1, runId, interrupted };
    }
    return { code: result.code, runId, interrupted: null };
  } finally {
    await lock.release();
  }
}

/** 128 + SIGINT: interrupted before done (CLI.md exit codes). */
const EXIT_INTERRUPTED = 130;

/** The foreground supervisor: this process is the parent of the run until it stops. */
async function superviseHere(o: SupervisionOptions, emit: (e: UpEvent) => void, warn: (w: string) => void): Promise<SupervisorResult> {
  const { Supervisor } = await import('./supervisor.js');
  // Our environment was fixed by the user's shell, without the run marker: holding the run's
  // directory open is how teardown tells this process is the run's (run-marker-proof.ts).
  const dirFd = holdOpen(runDir(o.stateDir, o.runId));
  const sup = new Supervisor({ ...o, detach: false });
  sup.on('event', emit);
  sup.on('warning', warn);
  // Dying of a bug would leave every worker running and holding the GPU: stop them first.
  const lastResort = (err: unknown) => void sup.crash(err);
  process.on('uncaughtException', lastResort);
  process.on('unhandledRejection', lastResort);
  try {
    return await sup.run();
  } finally {
    process.off('uncaughtException', lastResort);
    process.off('unhandledRejection', lastResort);
    if (dirFd !== null) closeSync(dirFd);
  }
}

/** A folder opened read-only (close-on-exec, as Node opens everything: no child inherits it); null when it cannot be. */
function holdOpen(dir: string): number | null {
  try {
    return openSync(dir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW);
  } catch {
    return null;
  }
}

/**
 * `--detach`: the run is supervised by a background process that stays its parent after we exit
 * (detached.ts). We relay its events until ready; a signal before ready stops the run (a second
 * one: SIGKILL at once). Should it be lost before ready, what it started is stopped here.
 */
async function superviseDetached(o: SupervisionOptions, emit: (e: UpEvent) => void, warn: (w: string) => void): Promise<DetachedResult> {
  const { launchDetached } = await import('./detached.js');
  const handle = launchDetached(o, join(runDir(o.stateDir, o.runId), 'supervisor.log'));
  handle.on('event', emit);
  handle.on('warning', warn);
  let stopping = false;
  const off = stopThenEscalate({
    stop: (s) => {
      stopping = true;
      handle.stop(s);
    },
    escalate: (s) => handle.escalate(s),
  });
  try {
    const result = await handle.result;
    if (result.outcome === 'lost') {
      warn(`${result.reason}; stopping what it started`);
      const { teardown } = await import('./teardown.js');
      const out = await teardown({ stateDir: o.stateDir, runId: o.runId, graceMs: o.graceMs, orphans: false });
      emit({ event: 'stopped', runId: o.runId, reason: 'failure', stopped: out.stopped, remaining: out.remaining.map(({ name, pid, cmd, state }) => ({ name, pid, cmd, ...(state ? { state } : {}) })), beforeReady: stopping });
      if (stopping && out.remaining.length === 0) return { outcome: 'stopped', code: 0, signal: 'SIGINT', beforeReady: true };
      return result;
    }
    // Stopped or failed before ready: "nothing left running" includes the supervisor itself.
    if (result.outcome !== 'detached') {
      const quick = new Promise<void>((r) => setTimeout(r, 5000).unref());
      await Promise.race([handle.exited, quick]);
    }
    return result;
  } finally {
    off();
  }
}

/** `up --name`: the recipe with first ports past those the live and starting runs hold and those in use (doctor/ports-beside.ts, doctor's choice too). */
async function portsBesideOrRefuse(recipe: Recipe, plan: Plan, lives: readonly RunView[], reserved: readonly Reservation[]): Promise<{ recipe: Recipe; line: string }> {
  const c = await (await import('../doctor/judge.js')).portsBeside(recipe, plan, lives, { reserved });
  if (!c.ok) throw new UserError(`--name: ${c.message}; ${c.fix}`);
  return c;
}

/** Every port the plan's processes take. */
const planPorts = (plan: Plan): number[] => plan.processes.flatMap((p) => Object.values(p.ports));

/** A run without a name keeps the recipe's ports: one another run is starting on is refused. */
function refuseReservedPorts(plan: Plan, reserved: readonly Reservation[], recipeRef: string): void {
  const mine = new Set(planPorts(plan));
  const r = reserved.find((x) => x.ports.some((p) => mine.has(p)));
  if (!r) return;
  const ports = r.ports.filter((p) => mine.has(p));
  throw new UserError(
    `port${ports.length > 1 ? 's' : ''} ${ports.join(', ')} of this run ${ports.length > 1 ? 'are' : 'is'} taken by run ${r.name ?? r.runId}, starting beside it (pid ${r.pid}); nothing started`,
    `dynamo-dev up ${recipeRef} --name NAME   (a run of its own, on other ports)`,
  );
}
