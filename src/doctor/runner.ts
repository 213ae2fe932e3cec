import type { Check, CheckOutcome, CheckResult, Facts } from './types.js';

export interface RunOptions {
  timeoutMs: number;
  /** Called as each check settles (spinners), with its index in the declared order. */
  onSettled?: (outcome: CheckOutcome, index: number) => void;
}

class CheckTimeout extends Error {}

/** Runs one check with a deadline; a throw or a timeout becomes a fail carrying the reason. */
async function runOne(check: Check, facts: Facts, timeoutMs: number): Promise<CheckOutcome> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let result: CheckResult;
  try {
    result = await Promise.race([
      check.run(facts),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CheckTimeout()), timeoutMs);
      }),
    ]);
  } catch (err) {
    const timedOut = err instanceof CheckTimeout;
    result = {
      status: 'fail',
      summary: timedOut
        ? `timed out after ${timeoutMs} ms (a probe did not answer)`
        : `check crashed: ${err instanceof Error ? err.message : String(err)}`,
      details: [],
      fix: timedOut ? `raise the limit with --timeout ${timeoutMs * 2}, or skip it with --skip ${check.id}` : null,
      evidence: {},
    };
  } finally {
    clearTimeout(timer);
  }
  return { id: check.id, title: check.title, ...result, durationMs: Math.round(performance.now() - t0) };
}

/**
 * Starts every check at once (they share memoized probes through facts) and resolves with the
 * outcomes in declared order, however they finish (flutter doctor's validators).
 */
export async function runChecks(checks: Check[], facts: Facts, opts: RunOptions): Promise<CheckOutcome[]> {
  return Promise.all(
    checks.map(async (c, i) => {
      const outcome = await runOne(c, facts, Math.max(opts.timeoutMs, c.minTimeoutMs ?? 0));
      opts.onSettled?.(outcome, i);
      return outcome;
    }),
  );
}

export interface Tally {
  pass: number;
  warn: number;
  fail: number;
  skip: number;
}

export function tally(outcomes: CheckOutcome[]): Tally {
  const t: Tally = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const o of outcomes) t[o.status]++;
  return t;
}

/** Exit-code judgement: any fail, or any warn under --strict. */
export function doctorOk(outcomes: CheckOutcome[], strict: boolean): boolean {
  const t = tally(outcomes);
  return t.fail === 0 && (!strict || t.warn === 0);
}
