// How a process ended, said once (pure): the live view, the failure report, supervisor.log, the
// restart policy, run.json's restart history and status's losses all word it here.

export interface HowEnded {
  code: number | null;
  signal: string | null;
  /** It could not be started at all (the interpreter not found...). */
  error?: string | null;
}

/**
 * "was killed by SIGKILL", "exited with code 1", "could not be started: ENOENT". `error`: how the
 * start's error is given: after a colon (a report), in parentheses (run.json's restart cause), or
 * not at all (supervisor.log, which never quotes a process).
 */
export function endedWords(e: HowEnded, error: 'colon' | 'parens' | 'omit' = 'colon'): string {
  if (e.error) return error === 'omit' ? 'could not be started' : error === 'parens' ? `could not be started (${e.error})` : `could not be started: ${e.error}`;
  return e.signal ? `was killed by ${e.signal}` : `exited with code ${e.code}`;
}

/** When, against the run's readiness: "after the run was ready", "before it was ready". */
export function whenEnded(afterReady: boolean): string {
  return afterReady ? 'after the run was ready' : 'before it was ready';
}
