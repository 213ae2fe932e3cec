import type { BenchVariant } from './result.js';

// Pure: a preset's control variant judged against what the preset expects of it (issue 31). The
// routing preset's kv-events-off is invalid by design (workers that publish no KV events): its
// kv.events gate failing is the control working, not a failed bench. Invalid by another gate, or
// measured (the gate did not catch it), it is a failure like any other.

export type ControlOutcome =
  | { kind: 'as-expected'; text: string }
  | { kind: 'unexpected'; text: string };

type Judged = Pick<BenchVariant, 'status' | 'reason'> & { control?: { gate: string; why: string } | null };

/** The control's outcome in words, or null for a variant that is no control (or was never run). */
export function controlOutcome(v: Judged): ControlOutcome | null {
  const c = v.control;
  if (!c || v.status === 'missing') return null;
  if (v.status === 'invalid' && v.reason !== null && v.reason.startsWith(`${c.gate}:`)) {
    return { kind: 'as-expected', text: `control: invalid as expected (${v.reason})` };
  }
  if (v.status === 'invalid') return { kind: 'unexpected', text: `control: expected invalid by ${c.gate}, but invalid by another gate (${v.reason ?? 'no reason'})` };
  if (v.status === 'measured') return { kind: 'unexpected', text: `control: expected invalid by ${c.gate} (${c.why}), but it passed every gate and was measured: ${c.gate} did not catch it` };
  return { kind: 'unexpected', text: `control: expected invalid by ${c.gate}, but it failed (${v.reason ?? 'no reason'})` };
}

/** Whether a variant makes the bench's exit code 1: invalid or failed, a control unless as expected; a control measured. */
export function variantFails(v: Judged): boolean {
  const c = controlOutcome(v);
  if (c) return c.kind === 'unexpected';
  return v.status === 'invalid' || v.status === 'failed';
}
