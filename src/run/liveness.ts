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
  /** Live pids found only by the run's marker (in no record): stopped by teardown one by one. */
  marked: number[];
  /** Supervisor (when alive) and every live pid of the run, sorted. */
  pids: number[];
  /**
   * The pids the run owns: the supervisor and the live pids of processes whose leader is alive.
   * What is left of a process whose leader died (an engine core that outlived its worker) is not
   * the run's working part: doctor counts it as a leftover (see losses.ts); except while the run's
   * live supervisor is stopping it (state `stopping`): then everything of it is being stopped.
   */
  ownedPids: number[];
  /**
   * What a stop left alive after SIGKILL and the record keeps (RunRecord.survivors), still the same
   * processes (start ticks), with their state letter in this scan (D: uninterruptible). They keep
   * the run live (in `pids`), but are no working part of it (not in `ownedPids`): doctor still
   * counts one as a leftover holding the GPU.
   */
  survivors?: { pid: number; state: string }[];
}

export type ScanIndex = Map<number, ProcStat>;

/**
 * Pure: a live supervisor is stopping the run (its record says `stopping`). A supervisor that died
 * mid-stop (SIGKILL, OOM) leaves the record saying `stopping` while nothing stops the run any more.
 */
export function supervisorStopping(rec: Pick<RunRecord, 'state'>, supervisorAlive: boolean): boolean {
  return supervisorAlive && rec.state === 'stopping';
}

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

/** A pid or pgid we may ever act on: 0 means "my own group" to kill(2), 1 is init (and -1 "everyone"). */
export const signallable = (n: number | null | undefined): n is number => typeof n === 'number' && Number.isInteger(n) && n > 1;

/**
 * Pure: live pids of one recorded process. Its group counts only while something proves it is
 * still the one we started: the live leader (same start ticks) still in it, or a recorded
 * descendant (pid and start ticks) in it. A group whose leader is gone and that nothing recorded
 * lives in may be a stranger that reused the pgid. Pids and pgids 0 and 1 are never ours.
 */
export function processPids(p: ProcessRecord, scan: readonly ProcStat[], index: ScanIndex = indexScan(scan)): ProcessLiveness {
  const pids = new Set<number>();
  const leader = signallable(p.pid) ? index.get(p.pid) : undefined;
  const alive = signallable(p.pid) && sameIn(index, p.pid, p.startTicks);
  const recycled = leader !== undefined && !alive;
  // Stryker disable next-line ArrayDeclaration: equivalent, any element without a pid is filtered out just below
  const liveDescendants = (p.descendants ?? []).filter((d) => signallable(d.pid) && sameIn(index, d.pid, d.startTicks));
  for (const d of liveDescendants) pids.add(d.pid);
  if (alive) {
    pids.add(p.pid!);
    for (const d of descendantsIn(scan, p.pid!)) pids.add(d.pid);
  }
  const pgid = p.pgid ?? p.pid;
  if (signallable(pgid) && !recycled && p.startTicks !== null) {
    const leaderInGroup = alive && leader!.pgid === pgid;
    const provenByDescendant = liveDescendants.some((d) => index.get(d.pid)?.pgid === pgid);
    if (leaderInGroup || provenByDescendant) {
      for (const m of membersOf(scan, pgid)) {
        // Stryker disable next-line UnaryOperator: equivalent, members come from the same scan, so the index always has them
        if (leaderInGroup || (index.get(m)?.startTicks ?? -1) >= p.startTicks) pids.add(m);
      }
    }
  }
  return { name: p.name, alive, recycled, pids: [...pids].sort((a, b) => a - b) };
}

/**
 * `marked`: live pids that carry this run's marker in their environment (run-scan.ts), found even
 * when no record names them (a double fork out of the group, a spawn `up` never got to record).
 */
export function runLiveness(rec: RunRecord, scan: readonly ProcStat[], marked: readonly number[] = []): RunLiveness {
  const index = indexScan(scan);
  const supervisor = sameIn(index, rec.supervisor?.pid ?? null, rec.supervisor?.startTicks ?? null);
  const perProcess = rec.processes.map((p) => processPids(p, scan, index));
  const all = new Set<number>(perProcess.flatMap((p) => p.pids));
  const unrecorded = marked.filter((pid) => index.has(pid) && !all.has(pid) && pid !== rec.supervisor?.pid);
  for (const pid of unrecorded) all.add(pid);
  const survivors = (rec.survivors ?? []).filter((s) => signallable(s.pid) && sameIn(index, s.pid, s.startTicks)).map((s) => ({ pid: s.pid, state: index.get(s.pid)!.state }));
  for (const s of survivors) all.add(s.pid);
  // Marked processes in no record (a helper that double-forked) count as the run's own. So does,
  // while the run's live supervisor stops it, what is left of a process whose leader ended first:
  // a program whose wrapper (sh -c, a venv script) died at the group's SIGTERM while the program
  // shuts down, an engine core finishing after its worker. The stop follows them; nothing is left yet.
  const stopping = supervisorStopping(rec, supervisor);
  const owned = new Set<number>([...perProcess.filter((p) => p.alive || stopping).flatMap((p) => p.pids), ...unrecorded]);
  const processes = all.size > 0;
  if (supervisor) {
    all.add(rec.supervisor.pid);
    owned.add(rec.supervisor.pid);
  }
  const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);
  return { supervisor, processes, perProcess, marked: sorted(new Set(unrecorded)), pids: sorted(all), ownedPids: sorted(owned), survivors };
}
