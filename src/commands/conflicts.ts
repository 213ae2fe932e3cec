import { UserError } from '../errors.js';

// Flags that contradict each other are refused (exit 2) instead of one silently winning:
// `up --dry-run --script` used to print the plan and drop the script.

export interface Conflict {
  /** Option keys as commander names them (dryRun), with the flags as the user typed them. */
  a: [key: string, flag: string];
  b: [key: string, flag: string];
  why: string;
}

const given = (v: unknown) => v !== undefined && v !== false && !(Array.isArray(v) && v.length === 0);

export function refuseConflicts(opts: Record<string, unknown>, conflicts: readonly Conflict[]): void {
  for (const c of conflicts) {
    if (given(opts[c.a[0]]) && given(opts[c.b[0]])) throw new UserError(`${c.a[1]} and ${c.b[1]} cannot be used together: ${c.why}`);
  }
}
