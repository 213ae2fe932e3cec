import type { TimerHandle } from './clock.js';
import type { RestartDone } from './supervisor-types.js';
import type { Diagnosis } from './diagnosis.js';
import { policyText } from './policy/restart-policy.js';
import { readinessPlan } from './policy/readiness.js';
import type { ProcessLifecycle } from './process-lifecycle.js';
import { pollHttp } from './readiness.js';
import type { RestartEvent } from './restart-request.js';
import type { RunCore } from './run-core.js';
import { keepSurvivors } from './keep-survivors.js';
import type { RestartJob } from './restart-job.js';
import type { ExitInfo } from './spawn.js';
import { endedWords } from './ended.js';
import type { RestartEntry } from './types.js';
import { ALREADY_GONE } from './stop-types.js';

// Restarting one process of a live run (`dynamo-dev restart`, `up --restart on-failure`): stopped
// as teardown would stop it (its group, SIGTERM, grace, SIGKILL, the pid-reuse guard), started
// again from the plan with its log appended after a marker line, judged ready again (its KV line
// and health, then the frontend counting every worker; for the frontend its whole readiness). The
// run is `degraded` meanwhile and `ready` again once every process is.

export type { RestartJob } from './restart-job.js';

export interface RestartWhy {
  by: RestartEntry['by'];
  /** How it had ended (null: it was running, or ask its exit). */
  cause: string | null;
  diagnosis: string | null;
}

/** `readyTimeoutMs` 0: the run's own deadline. */
export async function restartProcess(
  run: RunCore, name: string, o: { graceMs: number; readyTimeoutMs: number }, note: (e: RestartEvent) => void = () => {},
  why: RestartWhy = { by: 'command', cause: null, diagnosis: null },
): Promise<RestartDone> {
  const { d } = run;
  const p = run.procs.find((q) => q.name === name);
  const refuse = (reason: string): RestartDone => {
    const e: RestartDone = { event: 'done', ok: false, process: name, reason, diagnosis: null, lastLines: [], log: null, runState: run.record.state };
    note(e);
    return e;
  };
  if (!p) return refuse(`no process "${name}" in this run`);
  if (run.finishing) return refuse('the run is stopping');
  if (!run.everReady) return refuse('the run is still starting; a process can be restarted once the run has been ready');
  // A second ask while one is under way follows it: its outcome is this one's too.
  if (p.restart) return joinRestart(p.restart, name, note);
  let settle!: (e: RestartDone) => void;
  const done = new Promise<RestartDone>((r) => (settle = r));
  // A command's restart of a process that had ended says how it ended, as the policy's does.
  const ended = p.exit !== null && why.cause === null ? { cause: endedWords(p.exit, 'parens'), diagnosis: p.rec.diagnosis?.code ?? null } : {};
  const entry: RestartEntry = {
    at: '', by: why.by, cause: why.cause, exitCode: p.exit?.code ?? null, signal: p.exit?.signal ?? null, diagnosis: why.diagnosis, outcome: null, ...ended,
  };
  const job: RestartJob = { phase: 'stopping', abort: new AbortController(), deadline: null, t0: d.clock.now(), entry, note, settle: (e) => {
    note(e);
    settle(e);
  } };
  p.restart = job;
  note({ event: 'taken', process: name, pid: p.exit === null ? p.rec.pid : null });
  run.setRunState('degraded');
  // Also when it has ended: what is left of its group (an engine core holding GPU memory) goes too.
  if (p.rec.pid !== null) {
    p.refreshDescendants();
    const res = await d.stop(p.targets(), { graceMs: o.graceMs }).done;
    for (const r of res.stopped) {
      // 'taken' already said an ended process is not running: its pid found gone adds nothing.
      if (p.exit !== null && r.signal === null && (r.note === undefined || r.note === ALREADY_GONE)) continue;
      note({ event: 'stopped', process: name, pid: r.pid, signal: r.signal, ms: r.ms, ...(r.note ? { note: r.note } : {}) });
    }
    if (res.remaining.length > 0) {
      keepSurvivors(run, res.remaining);
      endRestart(run, p, job, `${name} outlived SIGKILL (pid ${res.remaining.map((r) => r.pid).join(', ')}); it is not started again beside it`, null);
      return done;
    }
    // Its exit code (the exit is recorded as it comes): the group is empty, so it comes at once.
    if (p.exit === null) {
      let t: TimerHandle | null = null;
      await Promise.race([p.spawned?.exited, new Promise((r) => (t = d.clock.setTimeout(() => r(null), 300)))]);
      if (t) d.clock.clear(t);
    }
  }
  if (p.restart !== job) return done; // the run was stopped meanwhile
  const at = new Date();
  const n = (p.rec.restarts ?? 0) + 1;
  const marker = why.by === 'on-failure'
    ? `--- dynamo-dev restart ${at.toISOString()}: ${name} ${why.cause ?? 'ended'}; started again by --restart ${policyText(run.o.restart ?? { mode: 'on-failure', max: null })} (restart ${n}) ---`
    : `--- dynamo-dev restart ${at.toISOString()}: ${name} stopped and started again (restart ${n}) ---`;
  let offset = 0;
  try {
    offset = d.appendLog(p.rec.log, marker);
  } catch (err) {
    run.warn(`cannot mark the restart in ${p.rec.log}: ${(err as Error).message}`);
  }
  Object.assign(p.rec, {
    exitCode: null, signal: null, endedAt: null, noticedGoneAt: null, diagnosis: null, kvTokens: null, descendants: [], restarts: n, restartedAt: at.toISOString(), stop: null,
  });
  entry.at = at.toISOString();
  p.rec.restartHistory = [...(p.rec.restartHistory ?? []), entry];
  p.exit = null;
  p.lines = [];
  p.follower?.stop();
  job.phase = 'starting';
  p.newReadiness(job.abort.signal);
  const timeoutMs = o.readyTimeoutMs > 0 ? o.readyTimeoutMs : run.o.readyTimeoutMs;
  job.deadline = d.clock.setTimeout(() => void restartDeadline(run, p, job, timeoutMs), timeoutMs, true);
  p.start(offset);
  note({ event: 'starting', process: name, pid: p.rec.pid, log: p.rec.log, marker });
  // A worker with no ready signal of its own (the mocker) is ready when the frontend counts it.
  if (p.readiness.plan.viaFrontend) {
    void frontendCounts(run, job.abort.signal).then((ok) => {
      if (!ok || p.restart !== job) return;
      p.readiness.confirm();
      void restartReady(run, p, job);
    });
  }
  return done;
}

/** Follows a restart under way: says so, then its `done` is this ask's answer as well. */
function joinRestart(job: RestartJob, name: string, note: (e: RestartEvent) => void): Promise<RestartDone> {
  note({ event: 'taken', process: name, pid: null, joined: true });
  return new Promise<RestartDone>((resolve) => {
    const first = job.settle;
    job.settle = (e) => {
      first(e);
      note(e);
      resolve(e);
    };
  });
}

/** The restarted process is ready by its own signs: a worker waits for the frontend to count it. */
export async function restartReady(run: RunCore, p: ProcessLifecycle, job: RestartJob): Promise<void> {
  if (job.phase !== 'starting') return;
  if (p.spec.role !== 'frontend' && !p.readiness.plan.viaFrontend) {
    if (!(await frontendCounts(run, job.abort.signal)) || p.restart !== job) return;
  }
  job.note({ event: 'counted', process: p.name, by: 'frontend' });
  if (job.deadline) run.d.clock.clear(job.deadline);
  job.abort.abort(new Error('ready'));
  p.restart = null;
  // Back and ready: a later death is the policy's to judge again.
  p.rec.restartsEnded = null;
  job.entry.outcome = 'ready';
  // Watching needs no follower once ready (as watching stops them all).
  if (run.watching) p.follower?.stop();
  if (run.procs.every((q) => q.rec.state === 'ready')) run.setRunState('ready');
  await run.writer.flush();
  job.settle({ event: 'done', ok: true, process: p.name, ms: run.d.clock.now() - job.t0, runState: run.record.state });
}

/** The frontend's readiness steps again (live, model listed, every planned worker counted, a completion). */
async function frontendCounts(run: RunCore, signal: AbortSignal): Promise<boolean> {
  const fe = run.frontend();
  if (!fe) return true;
  const { d } = run;
  try {
    for (const s of readinessPlan(fe.spec, run.o.plan, run.o.pollMs ?? 50).steps) {
      await pollHttp(s.url, s.judge, { intervalMs: s.intervalMs, requestTimeoutMs: s.timeoutMs ?? 1000, signal, body: s.body }, { get: d.get, post: d.post, clock: d.clock });
    }
    return true;
  } catch {
    return false; // aborted: the restart ended otherwise
  }
}

/** An exit while it restarts: its own stop's, or a start that did not come back. */
export async function onRestartExit(run: RunCore, p: ProcessLifecycle, job: RestartJob, info: ExitInfo): Promise<void> {
  if (job.phase === 'stopping') return p.setState('stopped');
  p.follower?.drain();
  if (job.phase === 'ending') return; // given up on at the deadline: endRestart said why
  job.phase = 'ending';
  p.setState('failed');
  const top = await p.diagnose();
  endRestart(run, p, job, `${p.name} ${endedWords(info)} while starting again`, top);
  if (run.watching && run.procs.every((q) => q.exit !== null)) await run.fail({ reason: 'every process of the run has ended', process: null, diagnosis: null });
}

/** Not ready in time: stopped again (as up stops a start that passed its deadline), reported with what it waited for. */
async function restartDeadline(run: RunCore, p: ProcessLifecycle, job: RestartJob, timeoutMs: number): Promise<void> {
  if (p.restart !== job || job.phase !== 'starting') return;
  job.phase = 'ending';
  job.abort.abort(new Error('deadline'));
  const fv = p.failureView(run.frontend());
  const waiting = fv.waitingFor ?? (p.readiness.plan.kvPattern && !p.readiness.kvSeen ? 'its KV cache line' : 'readiness');
  if (p.exit === null) await run.d.stop(p.targets(), { graceMs: run.o.graceMs }).done;
  p.follower?.drain();
  if (p.restart !== job) return;
  p.setState('failed');
  const top = await p.diagnose();
  endRestart(run, p, job, `${p.name} was not ready within ${Math.round(timeoutMs / 1000)} s (waiting for ${waiting}); stopped again`, top);
}

export function endRestart(run: RunCore, p: ProcessLifecycle, job: RestartJob, reason: string, diagnosis: Diagnosis | null): void {
  if (job.deadline) run.d.clock.clear(job.deadline);
  job.abort.abort(new Error('ended'));
  p.restart = null;
  Object.assign(job.entry, { outcome: 'failed', reason });
  if (!run.finishing) run.setRunState('degraded');
  run.writer.persist();
  job.settle({ event: 'done', ok: false, process: p.name, reason, diagnosis, lastLines: [...p.lines], log: p.rec.log, runState: run.record.state });
}

/** The restart signal: every pending request of `dynamo-dev restart`, each answered in its events file. */
export function takeRestartRequests(run: RunCore): void {
  const { d, o } = run;
  for (const r of d.restartRequests(o.stateDir, o.runId)) {
    const note = (e: RestartEvent) => d.restartEvent(o.stateDir, o.runId, r.id, e);
    void restartProcess(run, r.process, { graceMs: r.graceMs, readyTimeoutMs: r.readyTimeoutMs }, note);
  }
}
