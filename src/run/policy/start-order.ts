import type { ProcessState } from '../types.js';

// Which planned process may start now. A worker waits for the processes in its `waitFor` to open
// their gate: for a worker with a KV line, that line (its GPU memory is taken, so the next one
// sizes its KV cache on what is left); for a process without one, its readiness.

export interface OrderView {
  name: string;
  state: ProcessState;
  waitFor: readonly string[];
  /** Whether processes that wait for this one may start. */
  gateOpen: boolean;
}

/** Pure: names of the waiting processes whose predecessors have all opened their gate, in plan order.
 *  An unknown name in waitFor does not hold anything up (the plan is validated elsewhere). */
export function startable(procs: readonly OrderView[]): string[] {
  const byName = new Map(procs.map((p) => [p.name, p]));
  return procs
    .filter((p) => p.state === 'waiting' && p.waitFor.every((n) => byName.get(n)?.gateOpen ?? true))
    .map((p) => p.name);
}
