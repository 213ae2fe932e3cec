import { lineTime } from '../diagnose/line-time.js';

// Interleaving several processes' logs by the time each line says it was written (`logs` with no
// process named). A line that says no time (a traceback, a library's warning) keeps the time of
// the line before it in its file, so it stays right after that line; lines before a file's first
// time take the process's start. Each file's own order is never changed: only the heads of the
// files are compared (a k-way merge), so a log whose times go backwards (Dynamo's threads flush
// out of order by a few ms) still prints in its own order. Equal times keep the order of the
// sources (the plan's). Memory: one batch per file, whatever the files' size.

export interface MergeSource {
  name: string;
  batches: AsyncIterator<string[]>;
  /** The time of lines before the file's first timed line (the process's start), ms; null: before everything. */
  startMs: number | null;
  /** Lines that came before these in the file (a tail's): the last time among them is what untimed first lines keep. */
  before?: string[];
}

/** The time of the last line of `lines` that says one. */
function lastTime(lines: string[], nearMs: number): number | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const t = lineTime(lines[i], nearMs);
    if (t !== null) return t;
  }
  return null;
}

interface Head {
  order: number;
  src: MergeSource;
  batch: string[];
  idx: number;
  /** The time of the line at idx (its own, else inherited). */
  key: number;
  last: number;
}

/**
 * Pulls every source to its end, passing runs of lines to `emit` in time order. `nearMs` places
 * the year of times written without one (see lineTime). `stop` ends it early (the reader went away).
 */
export async function mergeByTime(
  sources: MergeSource[],
  emit: (name: string, lines: string[]) => void | Promise<void>,
  o: { nearMs: number; stop?: () => boolean },
): Promise<void> {
  const keyOf = (h: Head): number => {
    const t = lineTime(h.batch[h.idx], o.nearMs);
    if (t !== null) h.last = t;
    return h.last;
  };
  /** Moves h to its next line (pulling a batch when needed); false when the source is done. */
  const ready = async (h: Head): Promise<boolean> => {
    while (h.idx >= h.batch.length) {
      const r = await h.src.batches.next();
      if (r.done) return false;
      h.batch = r.value;
      h.idx = 0;
    }
    h.key = keyOf(h);
    return true;
  };
  let heads: Head[] = [];
  for (const [order, src] of sources.entries()) {
    const h: Head = { order, src, batch: [], idx: 0, key: 0, last: lastTime(src.before ?? [], o.nearMs) ?? src.startMs ?? -Infinity };
    if (await ready(h)) heads.push(h);
  }
  const before = (a: Head, b: Head) => a.key < b.key || (a.key === b.key && a.order < b.order);
  while (heads.length > 0) {
    if (o.stop?.()) return;
    let best = heads[0];
    for (const h of heads) if (before(h, best)) best = h;
    // The best source's lines go out as one run while they stay ahead of every other head.
    let rival: Head | null = null;
    for (const h of heads) if (h !== best && (rival === null || before(h, rival))) rival = h;
    const out: string[] = [];
    for (;;) {
      out.push(best.batch[best.idx]);
      best.idx++;
      if (best.idx >= best.batch.length) break; // a new batch: emit first, pull after
      best.key = keyOf(best);
      if (rival !== null && !before(best, rival)) break;
    }
    await emit(best.src.name, out);
    if (best.idx >= best.batch.length && !(await ready(best))) heads = heads.filter((h) => h !== best);
  }
}
