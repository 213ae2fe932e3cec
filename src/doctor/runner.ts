// Placeholder signature; implemented by the doctor work. See runChecks below.
import type { Check, CheckOutcome, Facts } from './types.js';

export interface RunOptions {
  timeoutMs: number;
  /** Called as each check settles (spinners, NDJSON). */
  onSettled?: (outcome: CheckOutcome, index: number) => void;
}

/** Starts every check at once; resolves in declared order. A throw or timeout becomes fail. */
export async function runChecks(checks: Check[], facts: Facts, opts: RunOptions): Promise<CheckOutcome[]> {
  void checks; void facts; void opts;
  throw new Error('runChecks: not implemented yet');
}
