import { supervisorStopping } from './liveness.js';
import type { RunRecord, RunStatus } from './types.js';

// The word status says of a run (CLI.md's statuses), from its record and what is alive: pure.

/**
 * Pure: status of a record given what is alive. supervisor dead + processes alive -> 'orphaned'; a
 * run that was ready is `ready` only while it has lost nothing (`lost`: losses.ts), else `degraded`.
 */
export function runStatus(rec: RunRecord, alive: { supervisor: boolean; processes: boolean; lost?: number }): RunStatus {
  const s = rec.state;
  const wasReady = s === 'ready' || s === 'degraded';
  const readiness = (): RunStatus => ((alive.lost ?? 0) > 0 || s === 'degraded' ? 'degraded' : 'ready');
  if (alive.supervisor) {
    // The supervisor keeps the record current; `stopping` is on its way to stopped.
    if (wasReady) return readiness();
    return s === 'stopping' ? 'stopped' : s;
  }
  if (alive.processes) {
    // A detached run's supervisor was stopped or killed: its processes may still serve; judge them.
    if (rec.supervisor?.detached && wasReady) return readiness();
    return 'orphaned';
  }
  if (s === 'stopped' || s === 'stopping') return 'stopped';
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent: every state that gets here ends 'failed' (the line below), this line only says so for 'failed'
  if (s === 'failed') return 'failed';
  // Recorded as starting/ready, yet nothing lives and no supervisor noted why: it died.
  return 'failed';
}

/**
 * Pure: its live supervisor is stopping it while some of its processes still run. runStatus then
 * says `stopped` (CLI.md has no word for stopping); this is the truth status adds in its detail.
 */
export function beingStopped(rec: RunRecord, alive: { supervisor: boolean; processes: boolean }): boolean {
  return alive.processes && supervisorStopping(rec, alive.supervisor);
}

/**
 * Pure: its supervisor began stopping it (the record says `stopping`, SIGTERM went out) and died
 * before the end, while some of its processes still run: nothing stops them now (runStatus says
 * `orphaned`; `teardown --run` finishes the stop).
 */
export function stopOrphaned(rec: RunRecord, alive: { supervisor: boolean; processes: boolean }): boolean {
  return alive.processes && !alive.supervisor && rec.state === 'stopping';
}
