import { REASON_TEXT, type LocalReason } from './local-only.js';

/** One difference between the local plan and the manifest: printed as one stderr line. */
export interface ChangeNote {
  /** Process names of the local plan (agg-0, frontend), or a component / field. */
  who: string;
  from: string;
  to: string;
  why: string;
}

export function formatNote(n: ChangeNote): string {
  return `${n.who}: ${n.from} -> ${n.to} (${n.why})`;
}

export interface DroppedItem {
  process: string;
  /** An env key or a flag. */
  item: string;
  reason: LocalReason;
}

/**
 * Dropped local-only items, one note per reason and set of processes: which items, where. Listing
 * every key of every process would bury the lines that matter (fractions, replicas) under dozens.
 */
export function droppedNotes(items: DroppedItem[], allProcesses: string[], workers: string[]): ChangeNote[] {
  const byProcess = new Map<string, Map<LocalReason, string[]>>();
  for (const d of items) {
    const m = byProcess.get(d.item) ?? new Map<LocalReason, string[]>();
    const procs = m.get(d.reason) ?? [];
    if (!procs.includes(d.process)) procs.push(d.process);
    m.set(d.reason, procs);
    byProcess.set(d.item, m);
  }
  const groups = new Map<string, { reason: LocalReason; who: string; items: string[] }>();
  for (const [item, m] of byProcess) {
    for (const [reason, procs] of m) {
      const who = whoText(procs, allProcesses, workers);
      const key = `${reason}|${who}`;
      const g = groups.get(key) ?? { reason, who, items: [] };
      g.items.push(item);
      groups.set(key, g);
    }
  }
  const order = Object.keys(REASON_TEXT) as LocalReason[];
  return [...groups.values()]
    .sort((a, b) => order.indexOf(a.reason) - order.indexOf(b.reason))
    .map((g) => ({ who: g.who, from: g.items.join(', '), to: 'dropped', why: REASON_TEXT[g.reason] }));
}

function whoText(names: string[], all: string[], workers: string[]): string {
  const set = new Set(names);
  if (all.every((n) => set.has(n))) return 'every process';
  if (workers.length > 1 && set.size === workers.length && workers.every((n) => set.has(n))) return 'every worker';
  return all.filter((n) => set.has(n)).join(', ');
}
