import { orphanName } from './orphans.js';
import { endRestart } from './process-restart.js';
import { keepSurvivors } from './keep-survivors.js';
import type { RunCore } from './run-core.js';
import { markedSince } from './run-scan.js';
import { ALREADY_GONE, processTargets, type StopResult, type StopSnapshot, type Survivor } from './stop.js';
import type { TimerHandle } from './clock.js';

// Stopping a whole run (a user stop, a failure, teardown): every process's group with SIGTERM ->
// grace -> SIGKILL (stop.ts, escalatable), then what the run marker names that no record does,
// then the exit codes collected. What outlives SIGKILL stays the run's in run.json.

type Stopped = { stopped: StopResult[]; remaining: Survivor[] };

export async function stopAll(run: RunCore): Promise<Stopped> {
  const { d } = run;
  // Stryker disable next-line StringLiteral: equivalent: the abort reason is only caught by the readiness polls, never shown
  run.abort.abort(new Error('stopping'));
  run.clearTimers();
  // Stryker disable next-line BooleanLiteral: equivalent as `true`: setRunState('stopping') below persists the same record in the same write
  run.refreshDescendants(false);
  // When what ignores SIGTERM gets SIGKILL: status tells it while the run is stopping.
  const killAt = Date.now() + (run.escalated ? 0 : run.o.graceMs);
  run.record.stopKillAt = new Date(killAt).toISOString();
  run.setRunState('stopping');
  // After the state, and with it on disk: a restart overtaken by this stop answers that the run is
  // stopping, not the `degraded` its own start had set; the restart command judges the run from
  // run.json as soon as it hears (a write still pending showed it `degraded` in a loaded suite).
  if (run.procs.some((p) => p.restart)) await run.writer.flush();
  for (const p of run.procs) {
    if (p.restart) endRestart(run, p, p.restart, 'the run was stopped while it restarted', null);
  }
  for (const p of run.procs) if (p.rec.pid === null && p.rec.state === 'waiting') p.setState('stopped');
  const targets = processTargets(run.procs.map((p) => p.rec));
  let res: Stopped = { stopped: [], remaining: [] };
  if (targets.length > 0) {
    run.emitEvent({
      event: 'stopping', reason: run.stopWhy.reason, by: run.stopWhy.by, killAt,
      targets: targets.map((t) => ({ name: t.name, pid: t.pid })),
    });
    run.stopHandle = d.stop(targets, {
      graceMs: run.o.graceMs,
      onState: (snap: StopSnapshot) => run.stopProgress(snap),
    });
    if (run.escalated) run.stopHandle.escalate(run.escalatedBy);
    res = await run.stopHandle.done;
  }
  // What this stop sent each process, kept in run.json: a teardown that signalled us finds some
  // of them gone when it looks, and credits them to us from here rather than "already gone".
  for (const r of res.stopped) {
    const p = run.procs.find((q) => q.name === r.name && q.rec.pid === r.pid);
    if (p && r.signal !== null) p.rec.stop = { signal: r.signal, ms: r.ms };
  }
  res = await stopUnrecorded(run, res);
  // Collect exit codes of the children we signalled (they are gone: the group is empty).
  let grace: TimerHandle | null = null;
  await Promise.race([
    Promise.all(run.procs.map((p) => p.spawned?.exited ?? Promise.resolve(null))),
    new Promise((r) => (grace = d.clock.setTimeout(() => r(null), 300))),
  ]);
  if (grace) d.clock.clear(grace);
  for (const p of run.procs) {
    p.follower?.stop();
    // What ended on its own before the stop keeps saying how (failed, exited).
    if (p.rec.state !== 'failed' && p.rec.state !== 'stopped' && p.rec.state !== 'exited') p.setState('stopped');
  }
  keepSurvivors(run, res.remaining);
  return res;
}

/**
 * What the stop of the recorded targets missed but the run marker names (a helper that
 * double-forked out of its group): stopped alone, in up to two more passes, so `stopped` never
 * reports nothing remaining while something of the run lives.
 */
async function stopUnrecorded(run: RunCore, res: Stopped): Promise<Stopped> {
  for (let pass = 0; pass < 2; pass++) {
    const left = (await run.d.marked(run.marker, markedSince(run.record) ?? 0)).filter((m) => !res.remaining.some((r) => r.pid === m.pid));
    if (left.length === 0) break;
    const targets = left.map((m) => ({ name: orphanName(m.cmd), pid: m.pid, pgid: m.pid, startTicks: m.startTicks, single: true }));
    run.stopHandle = run.d.stop(targets, { graceMs: run.o.graceMs });
    if (run.escalated) run.stopHandle.escalate(run.escalatedBy);
    const more = await run.stopHandle.done;
    res = { stopped: [...res.stopped, ...more.stopped], remaining: [...res.remaining, ...more.remaining] };
  }
  return res;
}

/** The note of a process that teardown's own SIGTERM ended before the supervisor's stop reached it. */
export const TEARDOWN_ENDED = "ended by dynamo-dev teardown's SIGTERM";

/**
 * A user's stop (a signal, teardown): stopAll, with what teardown ended itself credited to it.
 * teardown signals the run's processes too, right after us: one can die of its SIGTERM before or
 * while our stop looks at it, and our stop then finds it gone (no signal, 'already gone'). It was
 * stopped all the same, by teardown: counted so, not left out of "stopped N processes". Those are
 * the ones running now, and those whose exit was already taken for teardown's (state stopped).
 */
export async function stopForUser(run: RunCore): Promise<Stopped> {
  const byTeardown = new Set(run.stopWhy.reason !== 'teardown' ? [] : run.procs
    .filter((q) => q.rec.pid !== null && (q.exit === null || q.rec.state === 'stopped'))
    .map((q) => q.name));
  const all = await stopAll(run);
  const stopped = all.stopped.map((r) => (r.signal === null && r.note === ALREADY_GONE && byTeardown.has(r.name) ? { ...r, signal: 'SIGTERM' as const, note: TEARDOWN_ENDED } : r));
  return { stopped, remaining: all.remaining };
}
