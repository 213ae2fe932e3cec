import type { Gate, GateFacts, GateStatus } from './types.js';
import workersReady from './workers-ready.js';
import kvEvents from './kv-events.js';
import processesAlive from './processes-alive.js';
import noLockWait from './no-lock-wait.js';
import sameModel from './same-model.js';

/** Every gate, in the order the report shows them. */
// A process that died during the load first: it explains the frontend's missing worker that follows from it.
export const GATES: Gate[] = [sameModel, processesAlive, workersReady, kvEvents, noLockWait];

// A type, not an interface: it is stored in bench's result, whose loose zod objects take any key.
export type GateResult = {
  id: string;
  title: string;
  status: GateStatus;
  summary: string;
  evidence: Record<string, unknown>;
};

/** Every gate's verdict on the facts (a judge that throws is `unknown` with the reason, never a pass). */
export function judgeGates(f: GateFacts, gates: Gate[] = GATES): GateResult[] {
  return gates.map((g) => {
    try {
      return { id: g.id, title: g.title, ...g.judge(f) };
    } catch (err) {
      return { id: g.id, title: g.title, status: 'unknown' as const, summary: `the gate could not judge: ${(err as Error).message}`, evidence: {} };
    }
  });
}

/** The first failing gate, or null: a variant with one is invalid. */
export const firstFailed = (gates: readonly GateResult[]): GateResult | null => gates.find((g) => g.status === 'fail') ?? null;
