import { descendantsIn, membersOf, type ProcStat } from './proc.js';
import type { ProcessRecord, RunRecord } from './types.js';

// What of a recorded run is alive, judged against one scan of /proc (pure given the scan, so
// status, teardown and doctor see the same answer and tests can feed fake scans).

export interface ProcessLiveness {
  name: string;
  /** The recorded pid is alive and is still the process we started (start ticks match). */
  alive: boolean;
  /** The recorded pid is alive but is another process now (pid reuse). */
  recycled: boolean;
  /** Every live pid of this process: leader, group members, recorded and current descendants. */
  pids: number[];
}

export interface RunLiveness {
  supervisor: boolean;
  /** Any pid of any process of the run alive (leader, group member or recorded descendant). */
  processes: boolean;
  perProcess: ProcessLiveness[];
  /** Supervisor (when alive) and every live pid of the run, sorted. */
  pids: number[];
}

export type ScanIndex = Map<number, ProcStat>;

const indexed = new WeakMap<readonly ProcStat[], ScanIndex>();
/** pid -> stat of one scan, built once per scan (status asks it about every run it shows). */
export function indexScan(scan: readonly ProcStat[]): ScanIndex {
  let index = indexed.get(scan);
  if (!index) indexed.set(scan, (index = new Map(scan.map((s) => [s.pid, s]))));
  return index;
}

/** The recorded process is alive and is the same one (start ticks equal). */
export function sameIn(index: ScanIndex, pid: number | null, startTicks: number | null): boolean {
  if (pid === null || startTicks === null || startTicks === undefined) return false;
  return index.get(pid)?.startTicks === startTicks;
}

/**
 * Pure: live pids of one recorded process. The group is trusted only while the leader is the same
 * process, or (leader gone, e.g. it exited first and left its engine behind) for members that
 * started after it: a pgid stays reserved while any member lives, so those are the group's.
 */
export function processPids(p: ProcessRecord, scan: readonly ProcStat[], index: ScanIndex = indexScan(scan)): ProcessLiveness {
  const pids = new Set<number>();
  const leader = p.pid === null ? undefined : index.get(p.pid);
  const alive = sameIn(index, p.pid, p.startTicks);
  const recycled = leader !== undefined && !alive;
  if (p.pid !== null && !recycled && p.startTicks !== null) {
    if (alive) {
      pids.add(p.pid);
      for (const d of descendantsIn(scan, p.pid)) pids.add(d.pid);
    }
    const pgid = p.pgid ?? p.pid;
    for (const m of membersOf(scan, pgid)) {
      if (alive || (index.get(m)?.startTicks ?? -1) >= p.startTicks) pids.add(m);
    }
  }
  for (const d of p.descendants ?? []) if (sameIn(index, d.pid, d.startTicks)) pids.add(d.pid);
  return { name: p.name, alive, recycled, pids: [...pids].sort((a, b) => a - b) };
}

export function runLiveness(rec: RunRecord, scan: readonly ProcStat[]): RunLiveness {
  const index = indexScan(scan);
  const supervisor = sameIn(index, rec.supervisor?.pid ?? null, rec.supervisor?.startTicks ?? null);
  const perProcess = rec.processes.map((p) => processPids(p, scan, index));
  const all = new Set<number>(perProcess.flatMap((p) => p.pids));
  const processes = all.size > 0;
  if (supervisor) all.add(rec.supervisor.pid);
  return { supervisor, processes, perProcess, pids: [...all].sort((a, b) => a - b) };
}
