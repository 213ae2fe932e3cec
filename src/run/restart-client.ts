import { followFile, type Follower } from './follow.js';
import { isSameProcess, readStartTicks } from './proc.js';
import { notOursNote, provesRun } from './run-marker-proof.js';
import { markerFor } from './run-scan.js';
import {
  RESTART_CAPABILITY, RESTART_SIGNAL, eventsPath, newRequestId, withdrawRestartRequest, writeRestartRequest, type RestartEvent,
} from './restart-request.js';
import type { RunRecord } from './types.js';

// The side of `dynamo-dev restart` that talks to a run's supervisor (restart-request.ts says how):
// leave the request, wake the supervisor, follow its answer until `done`.

export type RestartAnswer = Extract<RestartEvent, { event: 'done' }>;

/** Pure: why this run's supervisor cannot take a restart request, or null when it can. */
export function cannotRestart(rec: RunRecord, supervisorAlive: boolean): string | null {
  if (!supervisorAlive) {
    return `its supervisor (pid ${rec.supervisor.pid}) is gone, and only the run's supervisor can start a process of it again ` +
      `(it is their parent); stop the run with \`dynamo-dev teardown --run ${rec.name ?? rec.id}\` and start it again with \`dynamo-dev up\``;
  }
  if (!rec.supervisor.requests?.includes(RESTART_CAPABILITY)) {
    return `its supervisor (pid ${rec.supervisor.pid}) does not take restart requests (started by an older dynamo-dev, or by a test harness); ` +
      `stop the run with \`dynamo-dev teardown --run ${rec.name ?? rec.id}\` and start it again`;
  }
  return null;
}

export interface RestartAsk {
  stateDir: string;
  rec: RunRecord;
  process: string;
  graceMs: number;
  readyTimeoutMs: number;
  onEvent(e: RestartEvent): void;
  /** How long the supervisor may take to claim the request (default 10 s). */
  takeTimeoutMs?: number;
}

/** Asks, then follows the answer; a supervisor that never takes the request or dies meanwhile is a failed restart. */
export async function askRestart(a: RestartAsk): Promise<RestartAnswer> {
  const { stateDir, rec } = a;
  const id = newRequestId(process.pid, Date.now());
  writeRestartRequest(stateDir, rec.id, { id, process: a.process, graceMs: a.graceMs, readyTimeoutMs: a.readyTimeoutMs, by: { pid: process.pid, startTicks: readStartTicks(process.pid) } });
  const failed = (reason: string): RestartAnswer => ({
    event: 'done', ok: false, process: a.process, reason, diagnosis: null, lastLines: [], log: null, runState: rec.state,
  });
  const sup = rec.supervisor;
  const alive = () => isSameProcess(sup.pid, sup.startTicks);
  if (!alive()) {
    withdrawRestartRequest(stateDir, rec.id, id);
    return failed(`the run's supervisor (pid ${sup.pid}) is gone`);
  }
  // Start time alone can be copied into a record: the run's marker (or, in the foreground, its open
  // run directory) says the pid is still our supervisor before anything signals it.
  if (!provesRun(sup.pid, markerFor(stateDir, rec.id), 'supervisor')) {
    withdrawRestartRequest(stateDir, rec.id, id);
    return failed(`the run's supervisor: ${notOursNote(sup.pid)}`);
  }
  try {
    process.kill(sup.pid, RESTART_SIGNAL);
  } catch (err) {
    withdrawRestartRequest(stateDir, rec.id, id);
    return failed(`cannot signal the run's supervisor (pid ${sup.pid}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return new Promise<RestartAnswer>((resolve) => {
    let taken = false;
    let finished = false;
    // Declared first: the follower's first read (at once, in followFile) may already hold the answer.
    let untaken: ReturnType<typeof setTimeout> | undefined;
    let watchdog: ReturnType<typeof setInterval> | undefined;
    let follower: Follower | null = null;
    const finish = (r: RestartAnswer) => {
      if (finished) return;
      finished = true;
      clearTimeout(untaken);
      clearInterval(watchdog);
      follower?.stop();
      resolve(r);
    };
    follower = followFile(eventsPath(stateDir, rec.id, id), (line) => {
      let e: RestartEvent;
      try {
        e = JSON.parse(line) as RestartEvent;
      } catch {
        return;
      }
      if (e.event === 'taken' || e.event === 'done') taken = true;
      a.onEvent(e);
      if (e.event === 'done') finish(e);
    }, { pollMs: 100 });
    if (finished) return void follower.stop();
    untaken = setTimeout(() => {
      if (taken || !withdrawRestartRequest(stateDir, rec.id, id)) return;
      finish(failed(`the run's supervisor (pid ${sup.pid}) did not take the request within ${Math.round((a.takeTimeoutMs ?? 10_000) / 1000)} s`));
    }, a.takeTimeoutMs ?? 10_000);
    // A supervisor that dies mid-restart never says done: its record still names every pid (teardown finds them).
    watchdog = setInterval(() => {
      if (alive()) return;
      follower?.drain();
      finish(failed(`the run's supervisor (pid ${sup.pid}) ended during the restart; see \`dynamo-dev status\``));
    }, 1000);
  });
}
