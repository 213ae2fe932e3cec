import { pythonModule, withKind } from '../host/procs/engine-procs.js';
import type { EngineKind, ProcessInfo } from '../host/types.js';

// Which engine processes `teardown --orphans` may stop. Pure: fed a process list, so the rules
// (own user only, never a live run's, never ourselves) are tested on fake lists.

export interface OrphanSelection {
  /** The invoking user's uid; null (unknown) selects nothing: we never guess whose a process is. */
  uid: number | null;
  /** Our pid and our ancestors (the shell, a wrapper): never selected. */
  protectedPids: Iterable<number>;
  /** Every live pid of every live run (RunView.pids): those belong to a run. */
  runPids: Iterable<number>;
  classify: (cmd: string) => EngineKind | null;
}

export type Orphan = ProcessInfo & { kind: EngineKind };

export function selectOrphans(procs: readonly ProcessInfo[], o: OrphanSelection): Orphan[] {
  // Stryker disable next-line ConditionalExpression: equivalent, with uid null the uid test in the loop skips every process too; this only saves the walk
  if (o.uid === null) return [];
  const protectedPids = new Set(o.protectedPids);
  const runPids = new Set(o.runPids);
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  /** A process whose ancestor is a live run's process belongs to that run. */
  const underRun = (p: ProcessInfo): boolean => {
    const seen = new Set<number>();
    let cur: ProcessInfo | undefined = p;
    while (cur && !seen.has(cur.pid)) {
      if (runPids.has(cur.pid)) return true;
      seen.add(cur.pid);
      cur = byPid.get(cur.ppid);
    }
    return false;
  };
  const out: Orphan[] = [];
  for (const p of procs) {
    // The command line first: it is all a listed process has read yet (the rest is read on ask).
    const kind = o.classify(p.cmd);
    if (!kind) continue;
    // Stryker disable next-line ConditionalExpression: equivalent, uid null is never equal to o.uid (null returned above); the null test says it for the reader
    if (p.uid === null || p.uid !== o.uid) continue; // never another user's process
    if (protectedPids.has(p.pid)) continue;
    if (underRun(p)) continue;
    out.push(withKind(p, kind));
  }
  return out;
}

/** A short name for a report line: the vLLM title or the dynamo module ("VLLM::EngineCore", "dynamo.vllm"). */
export function orphanName(cmd: string): string {
  const mod = pythonModule(cmd.trim().split(/\s+/));
  if (mod) return mod;
  // Stryker disable next-line Regex,StringLiteral: equivalent, after trim the first field is the same split on one or many spaces, and split always yields one
  const first = cmd.trim().split(/\s+/)[0] ?? '';
  const base = first.slice(first.lastIndexOf('/') + 1);
  return base.length > 40 ? `${base.slice(0, 39)}…` : base || 'process';
}
