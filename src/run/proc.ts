import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { eachPid, listPids, readSmallSync, readStatSync } from '../host/procs/proc-files.js';
import { parseCmdline, type ProcStat } from '../host/procs/parse-proc.js';
import type { DescendantRecord } from './types.js';

export type { ProcStat };

// Process identity from /proc. Cost follows what is asked, not the machine: one pid is a couple
// of tiny sync reads; a run's descendants are found by walking /proc/PID/task/*/children from its
// own pids; only liveness of whole process groups needs every process, and scanProcAsync() reads
// those in slices that never hold the event loop for more than a few milliseconds (a workstation
// runs thousands of processes: a sync scan of 3,000 of them blocks for ~50-500 ms).

/** A zombie (Z) or dead (X) entry holds no memory, ports or GPU context: it counts as gone. */
export const isGoneState = (state: string) => state === 'Z' || state === 'X';

/** The stat of a live (non-zombie) process, or null. */
export function readStat(pid: number): ProcStat | null {
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: /proc has no entry for 0, negatives or non-integers: the read returns null as the guard does (the guard saves an open)
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const s = readStatSync(pid);
  return s && !isGoneState(s.state) ? s : null;
}

/** The pid namespace of a process (`pid:[4026531836]`, /proc/PID/ns/pid); null when unreadable. */
export function readPidNamespace(pid: number | 'self'): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/** Field 22 of /proc/PID/stat (clock ticks since boot); null if the process is gone. Sync: used in hot paths. */
export function readStartTicks(pid: number): number | null {
  return readStat(pid)?.startTicks ?? null;
}

/** Alive AND its start ticks equal the recorded ones (the pid-reuse guard). startTicks null -> false. */
export function isSameProcess(pid: number, startTicks: number | null): boolean {
  if (startTicks === null || startTicks === undefined) return false;
  return readStartTicks(pid) === startTicks;
}

/** Full command line of a live process ('' when unreadable). */
export function readCmdline(pid: number): string {
  const raw = readSmallSync(`/proc/${pid}/cmdline`);
  return raw === null ? '' : parseCmdline(raw).trim();
}

/** Every live (non-zombie) process on the machine, from one sync pass over /proc (tests, small tools). */
export function scanProc(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const pid of listPids()) {
    const s = readStat(pid);
    if (s) out.push(s);
  }
  return out;
}

/** scanProc() without holding the event loop: slices of a few ms with a yield between them. */
export function scanProcAsync(): Promise<ProcStat[]> {
  return eachPid(listPids(), readStat);
}

let childrenFiles: boolean | undefined;
/** Whether this kernel has /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN; every distro kernel since 4.2). */
function hasChildrenFiles(): boolean {
  childrenFiles ??= readSmallSync(`/proc/${process.pid}/task/${process.pid}/children`) !== null;
  return childrenFiles;
}

/**
 * Direct children of pid (of all its threads: a child forked from a thread is listed under that
 * thread); [] when pid is gone; null when the kernel has no children files. The kernel may miss a
 * child forked or reparented during the read: callers that must not miss one re-check later.
 */
export function childrenOf(pid: number): number[] | null {
  if (!hasChildrenFiles()) return null;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const tid of tids) {
    const text = readSmallSync(`/proc/${pid}/task/${tid}/children`);
    if (!text) continue;
    for (const c of text.split(' ')) if (c) out.push(Number(c));
  }
  return out;
}

/** Pure: pids of a scan whose process group is pgid. */
export function membersOf(scan: readonly ProcStat[], pgid: number): number[] {
  return (indexes(scan).byGroup.get(pgid) ?? []).map((s) => s.pid);
}

interface ScanIndexes {
  children: Map<number, ProcStat[]>;
  byGroup: Map<number, ProcStat[]>;
}
// Built once per scan and kept with it: status, teardown and doctor ask many questions of one scan.
const indexCache = new WeakMap<readonly ProcStat[], ScanIndexes>();

function indexes(scan: readonly ProcStat[]): ScanIndexes {
  let ix = indexCache.get(scan);
  // Stryker disable next-line ConditionalExpression: a cache: the index rebuilt from the same scan is identical
  if (!ix) {
    ix = { children: new Map(), byGroup: new Map() };
    for (const s of scan) {
      const c = ix.children.get(s.ppid);
      if (c) c.push(s);
      else ix.children.set(s.ppid, [s]);
      const g = ix.byGroup.get(s.pgid);
      if (g) g.push(s);
      else ix.byGroup.set(s.pgid, [s]);
    }
    indexCache.set(scan, ix);
  }
  return ix;
}

/** Pure: every descendant of rootPid in a scan (by ppid chain), root excluded. */
export function descendantsIn(scan: readonly ProcStat[], rootPid: number): ProcStat[] {
  const { children } = indexes(scan);
  const out: ProcStat[] = [];
  const seen = new Set<number>([rootPid]);
  const queue = [rootPid];
  for (const cur of queue) { // also visits the pids pushed meanwhile
    for (const c of children.get(cur) ?? []) {
      if (seen.has(c.pid)) continue;
      seen.add(c.pid);
      out.push(c);
      queue.push(c.pid);
    }
  }
  return out;
}

/** Pure: pid's ancestors in a scan, nearest first (stops at pid 1 or an unknown parent). */
export function ancestorsIn(scan: readonly ProcStat[], pid: number): number[] {
  const byPid = new Map(scan.map((s) => [s.pid, s]));
  const out: number[] = [];
  let cur = byPid.get(pid);
  while (cur && cur.ppid > 0 && !out.includes(cur.ppid)) {
    out.push(cur.ppid);
    cur = byPid.get(cur.ppid);
  }
  return out;
}

/** pid's ancestors, nearest first, read one parent at a time (no scan). */
export function ancestors(pid: number): number[] {
  const out: number[] = [];
  let cur = readStat(pid);
  while (cur && cur.ppid > 0 && !out.includes(cur.ppid)) {
    out.push(cur.ppid);
    cur = readStat(cur.ppid);
  }
  return out;
}

/** Live pids whose process group is pgid (scan of /proc). */
export function groupMembers(pgid: number): number[] {
  return membersOf(scanProc(), pgid);
}

/**
 * Pure: the recorded descendants after a new scan. A process is the same one when pid and start
 * ticks match; its command line is taken from the newest scan, because a child caught between
 * fork and exec still shows its parent's command line (or none), and only after exec reads
 * `VLLM::EngineCore`. Returns null when nothing changed (no write of run.json needed).
 */
export function mergeDescendants(known: readonly DescendantRecord[], found: readonly DescendantRecord[]): DescendantRecord[] | null {
  const now = new Map(found.map((d) => [`${d.pid}:${d.startTicks}`, d]));
  let changed = false;
  const merged = known.map((d) => {
    const cur = now.get(`${d.pid}:${d.startTicks}`);
    if (!cur || cur.cmd === '' || cur.cmd === d.cmd) return d;
    changed = true;
    return { ...d, cmd: cur.cmd };
  });
  const seen = new Set(known.map((d) => `${d.pid}:${d.startTicks}`));
  const fresh = found.filter((d) => !seen.has(`${d.pid}:${d.startTicks}`));
  return changed || fresh.length > 0 ? [...merged, ...fresh] : null;
}

/**
 * Every live descendant of rootPid (root excluded), found by walking down the children files from
 * it: proportional to the tree, not the machine (a full scan only on kernels without them).
 */
export function descendantStats(rootPid: number): ProcStat[] {
  if (childrenOf(rootPid) === null) return descendantsIn(scanProc(), rootPid);
  const out: ProcStat[] = [];
  const seen = new Set<number>([rootPid]);
  const queue = [rootPid];
  for (const cur of queue) { // also visits the pids pushed meanwhile
    for (const c of childrenOf(cur) ?? []) {
      if (seen.has(c)) continue;
      seen.add(c);
      const s = readStat(c);
      if (!s) continue; // exited (or a zombie) meanwhile: its children, if any, were reparented
      out.push(s);
      queue.push(c);
    }
  }
  return out;
}

/**
 * These pids (those alive, zombies excluded) and every live descendant of them, read through the
 * children files: a look proportional to a run however many processes the machine runs. Null on a
 * kernel without children files (only a full scan finds descendants there).
 */
export function scanAround(pids: readonly number[]): ProcStat[] | null {
  if (!hasChildrenFiles()) return null;
  const found = new Map<number, ProcStat>();
  for (const pid of pids) {
    // Stryker disable next-line ConditionalExpression: cost only: the Map keeps one entry per pid either way
    if (found.has(pid)) continue;
    const s = readStat(pid);
    if (!s) continue;
    found.set(pid, s);
    for (const d of descendantStats(pid)) found.set(d.pid, d);
  }
  return [...found.values()];
}

/** Every live descendant of rootPid with start ticks and full cmdline (what run.json records). */
export function descendants(rootPid: number): DescendantRecord[] {
  return descendantStats(rootPid).map((s) => ({ pid: s.pid, startTicks: s.startTicks, cmd: readCmdline(s.pid) }));
}

/** Whether any process is in group pgid (kill with signal 0 sends nothing). */
export function groupExists(pgid: number): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false; // -1 would mean every process, 0 our own group
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // there, but another user's
  }
}

/**
 * A scan good enough to judge the liveness of these recorded pids and process groups, as exact as
 * a full one: while any of the groups has a member, every process is read (members are found only
 * by their pgid), without blocking the event loop; otherwise only the pids themselves and the
 * descendants of those alive, so old runs cost a few reads however busy the machine is.
 */
export async function scanFor(pids: readonly number[], groups: readonly number[]): Promise<ProcStat[]> {
  if (groups.some(groupExists)) return scanProcAsync();
  const found = new Map<number, ProcStat>();
  for (const pid of new Set(pids)) {
    const s = readStat(pid);
    if (!s || found.has(pid)) continue;
    found.set(pid, s);
    for (const d of descendantStats(pid)) found.set(d.pid, d);
  }
  return [...found.values()];
}

/**
 * Pure: whether the /proc we read shows our own pid namespace. `selfLink` is what /proc/self reads
 * (null: it does not resolve). A /proc mounted for another pid namespace (`unshare -p` without
 * --mount-proc; a shell `nsenter`ed into a namespace's mounts but not its pids) names its own pids:
 * a start-time check passes on ITS process while kill() reaches OUR namespace's process of that
 * number, a stranger. Without /proc at all (`procExists` false) there is nothing to mismatch.
 */
export function procIsOurs(selfLink: string | null, pid: number, procExists: boolean): boolean {
  if (!procExists) return true;
  return selfLink === String(pid);
}

/** Where /proc is another pid namespace's: how it shows (our pid, what /proc/self names); null where it is ours. */
function foreignProc(): string | null {
  let link: string | null = null;
  try {
    link = readlinkSync('/proc/self');
  } catch {
    // /proc/self does not resolve: this /proc belongs to another pid namespace (or there is none)
  }
  if (procIsOurs(link, process.pid, existsSync('/proc/1'))) return null;
  return `/proc shows another pid namespace than this process's (our pid is ${process.pid}, /proc/self ${link === null ? 'does not resolve' : `is ${link}`})`;
}

const RUN_WHERE = 'Run dynamo-dev where /proc is this namespace\'s (unshare --pid --fork --mount-proc, or mount -t proc proc /proc in it)';

/**
 * Refuses (an Error: one line, exit 1) to go on where /proc shows another pid namespace than ours:
 * every pid read there would be signalled in the wrong namespace. Called before up starts anything
 * and before teardown signals anything.
 */
export function assertProcIsOurs(): void {
  const foreign = foreignProc();
  if (foreign === null) return;
  throw new Error(`${foreign}: pids read there would be signalled in the wrong namespace, so nothing is started or signalled. ${RUN_WHERE}`);
}

/**
 * The warning status, doctor and logs print where /proc is another pid namespace's (they only read:
 * they run, but what they say of processes is that namespace's); null where /proc is ours.
 */
export function foreignProcWarning(): string | null {
  const foreign = foreignProc();
  return foreign === null ? null : `${foreign}: the processes reported here are that namespace's, not this one's. ${RUN_WHERE}`;
}
