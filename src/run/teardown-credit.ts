import { ALREADY_GONE, type StopResult } from './stop.js';
import type { RunRecord } from './types.js';

// teardown signals a live run's supervisor first and its processes right after; the supervisor
// stops them too (it knows the stop is teardown's: the stop request). Either may get there first:
// a process the supervisor ended before teardown looked is "gone" to teardown, and one that ignored
// SIGTERM may get the supervisor's SIGKILL (its own grace, up's --grace) before teardown's. What
// the supervisor sent is in run.json (processes[].stop), final once the supervisor has exited.
// Pure: teardown's I/O (when to read the record, when to print) is in teardown.ts.

/** A SIGKILL of the supervisor this close to a process's end may have been what ended it. */
const KILL_SLACK_MS = 250;

/**
 * Whether the supervisor may have ended this process rather than what teardown says (so the line
 * waits for the supervisor's final record): found gone, or ended on teardown's SIGTERM at or after
 * the moment the supervisor's own SIGKILL is due (`live`: the record as it reads now; a stop not
 * yet recorded may be an escalated one, SIGKILL at once).
 */
export function supervisorMayHaveEnded(r: StopResult, live: RunRecord | null, nowMs: number): boolean {
  if (r.signal === null) return r.note === ALREADY_GONE;
  if (r.signal !== 'SIGTERM') return false;
  const killAt = live?.stopKillAt ? Date.parse(live.stopKillAt) : Number.NaN;
  return !(killAt > nowMs + KILL_SLACK_MS);
}

/**
 * teardown's result for one process of a run, corrected by what the run's supervisor (pid
 * `supervisorPid`) recorded it sent: found gone, it was stopped by the supervisor's signal; ended
 * on teardown's SIGTERM while the supervisor had SIGKILLed it, it ignored SIGTERM. Anything else
 * (what really ended before anyone asked: no signal recorded) is left as teardown saw it.
 */
export function creditSupervisor(r: StopResult, rec: RunRecord | null, supervisorPid: number): StopResult {
  const sent = rec?.processes.find((p) => p.name === r.name && p.pid === r.pid)?.stop;
  if (!sent) return r;
  if (r.signal === null && r.note === ALREADY_GONE) {
    return { ...r, signal: sent.signal, ms: sent.ms, note: `stopped by its supervisor (pid ${supervisorPid}) for teardown`, by: 'supervisor' };
  }
  if (r.signal === 'SIGTERM' && sent.signal === 'SIGKILL') {
    return { ...r, signal: 'SIGKILL', note: `SIGKILL from its supervisor (pid ${supervisorPid}), whose grace ran out first`, by: 'supervisor' };
  }
  return r;
}
