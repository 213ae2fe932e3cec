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
  seed: number;
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
  send: (prompt: string) => Promise<SendOutcome>;
  /** A send that throws this kind of error ends the probe (the frontend went away); others are recorded. */
  isFatal?: (err: unknown) => boolean;
  onProgress?: (p: ProbeProgress) => void;
}

export async function runProbe(o: RunProbeOptions): Promise<ProbeSend[]> {
  const { prefixes, repeats, prefixTokens, seed } = o.settings;
  const prompts = buildPrompts({ prefixes, prefixTokens, seed });
  const schedule = buildSchedule(prefixes, repeats, seed);
  const sends: ProbeSend[] = [];
  for (const [i, item] of schedule.entries()) {
    const base = { prefix: item.prefix, repeat: item.repeat, prefixWords: prompts.prefixWords, tailWords: prompts.tailWords(item.prefix, item.repeat) };
    let s: ProbeSend;
    try {
      const r = await o.send(prompts.prompt(item.prefix, item.repeat));
      s = { ...base, ok: true, error: null, ...r };
    } catch (err) {
      if (o.isFatal?.(err)) throw err;
      s = { ...base, ok: false, error: (err as Error)?.message ?? String(err), ttftMs: null, totalMs: null, cachedTokens: null, promptTokens: null, workerId: null };
    }
    sends.push(s);
    o.onProgress?.({ done: i + 1, total: schedule.length, round: item.repeat + 1, rounds: repeats, last: s });
  }
  return sends;
}
