// Validity gates of a bench variant (issue 23): data beside doctor's checks. Each gate is a pure
// judge over GateFacts (gathered once per variant by src/run/bench-facts.ts) and names its
// evidence. A variant with a failing gate is INVALID: reported with the gate, never as a number.

import type { KvEventsApplied } from '../kv-events-metric.js';

export type GateStatus = 'pass' | 'fail' | 'unknown';

/** One of doctor's verdicts on the live run, as the gates read it. */
export interface CheckView {
  status: 'pass' | 'warn' | 'fail' | 'skip';
  summary: string;
  evidence: Record<string, unknown>;
}

export interface GateFacts {
  engine: string;
  router: { mode: string; kvEvents: boolean };
  /** Planned worker processes of the run (agg-0, prefill-0, ...). */
  workers: string[];
  /** doctor's checks of the live run (kv.allocated, kv.events, frontend.models); absent: not run. */
  checks: Partial<Record<'kv.allocated' | 'kv.events' | 'frontend.models', CheckView>>;
  /** Download-lock findings (hf.lock-wait, hf.lock-failed) in the run's logs. */
  lockWaits: { code: string; count: number; file: string; line: number; text: string }[];
  /**
   * The KV events the router applied to its index, from the frontend's /metrics (kv-events-metric.ts),
   * read after the load: undefined before it (not read), null where the frontend has no such counter.
   */
  kvEventsApplied?: KvEventsApplied | null;
  /** Planned processes the run lost by the end of the load; null before the load ran. */
  lost: { name: string; how: string; at: string | null }[] | null;
  model: string;
  tokenizer: string;
  /** The first variant's model and tokenizer (null: this is the first). */
  reference: { variant: string; model: string; tokenizer: string } | null;
}

export interface GateVerdict {
  status: GateStatus;
  summary: string;
  evidence: Record<string, unknown>;
}

export interface Gate {
  id: string;
  title: string;
  judge(f: GateFacts): GateVerdict;
}

export const verdict = (status: GateStatus, summary: string, evidence: Record<string, unknown>): GateVerdict => ({ status, summary, evidence });
