import { buildPrompts } from './prompts.js';
import { buildSchedule } from './schedule.js';
import type { ProbeSend } from './stats.js';

// The probe loop: the schedule's sends one at a time (never concurrently: a probe measures cache
// routing, not load balancing, and a router with equal load everywhere shows its prefix choice
// most clearly). The sender is injected, so the loop is tested without HTTP.

export interface ProbeSettings {
  prefixes: number;
  repeats: number;
  prefixTokens: number;
  /** Words of the prompts and the send order. */
  seed: number;
  /** Opens every prefix; fresh per run (see buildPrompts). Default: from the seed. */
  tag?: string;
  /** Tokens per KV block that hits were judged with (null: not known, whole prefixes). */
  blockSize?: number | null;
}

export interface SendOutcome {
  ttftMs: number;
  totalMs: number;
  cachedTokens: number | null;
  workerId: string | null;
  promptTokens: number | null;
}

export interface ProbeProgress {
  done: number;
  total: number;
  round: number;
  rounds: number;
  last: ProbeSend;
}

export interface RunProbeOptions {
  settings: ProbeSettings;
  send: (prompt: string, signal?: AbortSignal) => Promise<SendOutcome>;
  /** A send that throws this kind of error ends the probe (the frontend went away); others are recorded. */
  isFatal?: (err: unknown) => boolean;
  onProgress?: (p: ProbeProgress) => void;
  /** The user's cancel (Ctrl-C): the probe stops at once; the send it cut short is not recorded. */
  signal?: AbortSignal;
  /**
   * Failed sends in a row after which the probe gives up (default 3): a frontend that answers
   * nothing, or times out on every request, must not keep the user waiting for the whole
   * schedule (72 sends x the per-request timeout).
   */
  giveUpAfter?: number;
}

export const GIVE_UP_AFTER = 3;

export interface ProbeRun {
  sends: ProbeSend[];
  /** Sends the schedule planned. */
  planned: number;
  /** Why the probe ended before the schedule did; null when every planned send was made. */
  stopped: null | { reason: 'interrupted' } | { reason: 'failing'; failures: number; error: string };
}

export async function runProbe(o: RunProbeOptions): Promise<ProbeRun> {
  const { prefixes, repeats, prefixTokens, seed, tag } = o.settings;
  const giveUpAfter = o.giveUpAfter ?? GIVE_UP_AFTER;
  const prompts = buildPrompts({ prefixes, prefixTokens, seed, tag });
  const schedule = buildSchedule(prefixes, repeats, seed);
  const sends: ProbeSend[] = [];
  let failedInARow = 0;
  for (const [i, item] of schedule.entries()) {
    if (o.signal?.aborted) return { sends, planned: schedule.length, stopped: { reason: 'interrupted' } };
    const base = { prefix: item.prefix, repeat: item.repeat, prefixWords: prompts.prefixWords, tailWords: prompts.tailWords(item.prefix, item.repeat) };
    let s: ProbeSend;
    try {
      const r = await o.send(prompts.prompt(item.prefix, item.repeat), o.signal);
      s = { ...base, ok: true, error: null, ...r };
    } catch (err) {
      if (o.signal?.aborted) return { sends, planned: schedule.length, stopped: { reason: 'interrupted' } };
      if (o.isFatal?.(err)) throw err;
      s = { ...base, ok: false, error: (err as Error)?.message ?? String(err), ttftMs: null, totalMs: null, cachedTokens: null, promptTokens: null, workerId: null };
    }
    sends.push(s);
    failedInARow = s.ok ? 0 : failedInARow + 1;
    o.onProgress?.({ done: i + 1, total: schedule.length, round: item.repeat + 1, rounds: repeats, last: s });
    if (failedInARow >= giveUpAfter && i + 1 < schedule.length) {
      return { sends, planned: schedule.length, stopped: { reason: 'failing', failures: failedInARow, error: s.error ?? 'failed' } };
    }
  }
  return { sends, planned: schedule.length, stopped: null };
}
