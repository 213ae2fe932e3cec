// The stop timeline as pure decisions (no clock, no signals): when to look again and what to do
// with one target after a look. stop.ts runs it against /proc; tests run it against numbers.

/** What the stop loop does with one target after a scan. */
export type EscalationStep =
  | 'finish' // nothing of it is alive
  | 'kill' // first SIGKILL: the grace is over (or the user escalated)
  | 'kill-again' // still members after SIGKILL: keep signalling (the leader may be gone, new members may appear)
  | 'give-up' // survived SIGKILL for killWaitMs: report the survivors
  | 'wait'; // within the grace: let SIGTERM work

export function escalationStep(t: { killed: boolean; aliveCount: number; now: number; killAt: number; killWaitMs: number }): EscalationStep {
  if (t.aliveCount === 0) return 'finish';
  if (!t.killed) return t.now >= t.killAt ? 'kill' : 'wait';
  return t.now >= t.killAt + t.killWaitMs ? 'give-up' : 'kill-again';
}

/**
 * How long to wait before the next scan: fast while a clean shutdown is likely (first second) and
 * just after SIGKILL; a lighter pace otherwise (a scan reads every process); never past the kill
 * deadline, so SIGKILL is never late.
 */
export function nextScanInMs(t: { now: number; t0: number; killAt: number; pollMs: number }): number {
  const { now, t0, killAt, pollMs } = t;
  const pace = now - t0 < 1000 || (now >= killAt && now - killAt < 500) ? pollMs : Math.max(pollMs, 50);
  return now < killAt ? Math.max(1, Math.min(pace, killAt - now)) : pace;
}
