import { endedWords } from './ended.js';
import type { Diagnosis } from './diagnosis.js';
import { deadlineFailure, exitFailure } from './policy/failure.js';
import { backoffWords, decideRestart, nextRestartDelay, policyText } from './policy/restart-policy.js';
import type { ProcessLifecycle } from './process-lifecycle.js';
import { onRestartExit, restartProcess } from './process-restart.js';
import { kvLineHiddenBy } from './readiness.js';
import type { RunCore } from './run-core.js';
import type { ExitInfo } from './spawn.js';
import { endDiagnosis, type Failure } from './supervisor-types.js';
import { planContext } from '../diagnose/choose-fix.js';
import type { UpEvent } from './events.js';
import type { ProcessState } from './types.js';

// What a process's end means for the run (the failure and restart policies applied): a stop's own
// exit, teardown reaching it first, a restart by `up --restart`, a death recorded while watching
// (the run degraded), or the run's failure. And the ready deadline passing.

export async function onProcessExit(run: RunCore, p: ProcessLifecycle, info: ExitInfo): Promise<void> {
  if (p.restart && !run.finishing) return onRestartExit(run, p, p.restart, info);
  if (run.finishing) {
    if (p.rec.state !== 'failed') p.setState('stopped');
    return;
  }
  // `teardown` from another terminal may reach a process before its SIGTERM reaches us: a stop.
  if (run.d.stopRequest(run.o.stateDir, run.o.runId)) {
    p.setState('stopped');
    await run.stop('SIGTERM');
    return;
  }
  // up --restart: a worker that dies once the run was ready is started again, within the policy's limit.
  const policy = decideRestart(run.o.restart ?? null, {
    role: p.spec.role, afterReady: run.everReady, code: info.code, signal: info.signal, error: info.error,
    restartsByPolicy: (p.rec.restartHistory ?? []).filter((r) => r.by === 'on-failure').length,
  });
  if (policy.restart) return restartOnFailure(run, p, info);
  if (policy.why) p.rec.restartsEnded = { at: new Date().toISOString(), reason: policy.why };
  if (run.watching) return recordDeath(run, p, info);
  p.follower?.drain();
  p.setState('failed');
  const top = await p.diagnose();
  if (run.finishing) return;
  run.emitEvent({
    event: 'exited', process: p.name, code: info.code, signal: info.signal, error: info.error, diagnosis: top, afterReady: run.everReady,
    lastLines: [...p.lines], log: p.rec.log,
  });
  const f = exitFailure({ name: p.name, argv0: p.spec.argv[0] }, info, run.everReady);
  await run.fail({ ...f, reason: policy.why ? `${f.reason}; not restarted: ${policy.why}` : f.reason, diagnosis: top });
}

/**
 * `up --restart`: a worker of a ready run died; recorded as a death (the run degraded, its
 * diagnosis), then restarted as `dynamo-dev restart` does (what is left of its group stopped, a
 * marker in its log, started from the plan, ready again once the frontend counts it). One that
 * does not come back is not tried again: the run stays degraded and says why.
 */
async function restartOnFailure(run: RunCore, p: ProcessLifecycle, info: ExitInfo): Promise<void> {
  p.follower?.drain();
  const policy = policyText(run.o.restart!);
  const top = await degradedBy(run, p, info, 'failed', run.watching ? [] : [...p.lines], policy);
  if (run.finishing) return;
  const how = endedWords(info, 'parens');
  // A crash loop backs off as docker's does; the wait is said (up's hint) and recorded (status).
  const upMs = Math.max(0, run.d.clock.now() - p.startedMs);
  const delayMs = nextRestartDelay(p.backoffMs, upMs);
  p.backoffMs = delayMs;
  p.rec.restartBackoff = { delayMs, upMs, at: new Date(Date.now() + delayMs).toISOString() };
  run.writer.persist();
  run.emitEvent({ event: 'hint', process: p.name, code: 'restart.on-failure', text: backoffWords({ delayMs, upMs }) });
  // Unref'd: the wait keeps no stopped supervisor alive. The record keeps the last wait (status shows it while due).
  await new Promise<void>((r) => run.d.clock.setTimeout(r, delayMs));
  if (run.finishing) return;
  const done = await restartProcess(run, p.name, { graceMs: run.o.graceMs, readyTimeoutMs: 0 }, () => {}, { by: 'on-failure', cause: how, diagnosis: top?.code ?? null });
  if (done.ok) {
    run.emitEvent({ event: 'hint', process: p.name, code: 'restart.on-failure', text: `ready again (restart ${p.rec.restarts ?? 1}, --restart ${policy}); run ${done.runState}` });
    return;
  }
  if (run.finishing) return;
  p.rec.restartsEnded = { at: new Date().toISOString(), reason: `its restart did not come back: ${done.reason}` };
  run.writer.persist();
  // In the foreground a death after ready that is not made good ends the run, as without the flag.
  if (!run.watching) {
    await run.fail({ reason: `${p.name} ${how} after the run was ready; its restart did not come back: ${done.reason}`, process: p.name, diagnosis: done.ok ? null : done.diagnosis });
    return;
  }
  run.emitEvent({ event: 'hint', process: p.name, code: 'restart.on-failure', text: `did not come back (${done.reason}); not restarted again; the run is degraded` });
}

/**
 * A process of a watched (detached, ready) run ended: recorded with how and when and its log's
 * diagnosis; the run is degraded, the others keep serving (status, doctor and teardown take it
 * from run.json). When nothing of the run is left running, the run has failed: stop what is left
 * of it (an engine that outlived its worker) and return.
 */
async function recordDeath(run: RunCore, p: ProcessLifecycle, info: ExitInfo): Promise<void> {
  await degradedBy(run, p, info, info.code === 0 && info.signal === null ? 'exited' : 'failed', []);
  if (run.finishing || !run.procs.every((q) => q.exit !== null)) return;
  await run.fail({ reason: 'every process of the run has ended', process: null, diagnosis: null });
}

/** A death after ready that does not end the run: the process recorded so with its log's diagnosis, the run degraded, told. */
async function degradedBy(run: RunCore, p: ProcessLifecycle, info: ExitInfo, state: ProcessState, lastLines: string[], restart?: string): Promise<Diagnosis | null> {
  p.setState(state);
  run.setRunState('degraded');
  const top = await p.diagnose();
  run.writer.persist();
  run.emitEvent({
    event: 'exited', process: p.name, code: info.code, signal: info.signal, error: info.error, diagnosis: top, afterReady: true,
    lastLines, log: p.rec.log, ...(restart ? { restart } : {}),
  });
  return top;
}

/** Not ready by the deadline: the failure names the process behind and what it waited for. */
export async function onDeadline(run: RunCore): Promise<void> {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent: while finishing fail() below returns at once, and ready clears this timer
  if (run.finishing || run.everReady) return;
  const fe = run.frontend();
  const f: Failure = deadlineFailure(run.procs.map((p) => p.failureView(fe)), run.o.readyTimeoutMs);
  // A KV line that the logging level hides never comes: say so rather than "still loading".
  const stuck = run.procs.find((p) => p.name === f.process);
  const hidden = stuck?.readiness.plan.kvPattern && !stuck.readiness.kvSeen ? kvLineHiddenBy({ ...run.o.env, ...stuck.spec.env }) : null;
  if (hidden && !f.hint) {
    f.hint = `VLLM_LOGGING_LEVEL=${hidden} hides vLLM's INFO line "GPU KV cache size: N tokens" that readiness waits for: unset it or set it to INFO`;
  }
  // The failure report says who holds the lock it stalled behind, as the live hint did.
  const lock = stuck?.lockHintText;
  if (lock && !f.hint) f.hint = `${stuck!.name} was ${lock}`;
  await run.fail(f);
}

/** The process a failure blames, its diagnosis (its log's, unless the failure brought one) kept, and the `failed` event. */
export async function blame(run: RunCore, f: Failure): Promise<UpEvent> {
  const p = f.process === null ? null : run.procs.find((q) => q.name === f.process) ?? null;
  let diagnosis = f.diagnosis ?? null;
  if (p && f.diagnosis === undefined) {
    p.follower?.drain();
    diagnosis = (await run.d.diagnose(p.rec.log, planContext(run.o.plan))).top;
  }
  if (p && !p.rec.diagnosis) p.rec.diagnosis = endDiagnosis(diagnosis);
  if (p && p.rec.state !== 'failed') p.setState('failed');
  return {
    event: 'failed', reason: f.reason, process: p?.name ?? null, diagnosis, hint: f.hint ?? null,
    lastLines: p ? [...p.lines] : [], log: p?.rec.log ?? null,
  };
}
