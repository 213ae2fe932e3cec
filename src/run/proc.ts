import { readdirSync, readFileSync } from 'node:fs';
import { parseCmdline, parseProcStat, type ProcStat } from '../host/parse-proc.js';
import type { DescendantRecord } from './types.js';

export type { ProcStat };

// Process identity from /proc. Synchronous on purpose: teardown polls every ~15 ms and one scan of
// a few hundred small files takes a few milliseconds; async fan-out would only add overhead.

/** A zombie (Z) or dead (X) entry holds no memory, ports or GPU context: it counts as gone. */
export const isGoneState = (state: string) => state === 'Z' || state === 'X';

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The stat of a live (non-zombie) process, or null. */
export function readStat(pid: number): ProcStat | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const text = readText(`/proc/${pid}/stat`);
  const s = text === null ? null : parseProcStat(text);
  return s && !isGoneState(s.state) ? s : null;
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
  const raw = readText(`/proc/${pid}/cmdline`);
  return raw === null ? '' : parseCmdline(raw).trim();
}

/** Every live (non-zombie) process on the machine, from one pass over /proc. */
export function scanProc(): ProcStat[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  for (const n of names) {
    const c = n.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const s = readStat(Number(n));
    if (s) out.push(s);
  }
  return out;
}

/** Pure: pids of a scan whose process group is pgid. */
export function membersOf(scan: readonly ProcStat[], pgid: number): number[] {
  return scan.filter((s) => s.pgid === pgid).map((s) => s.pid);
}

/** Pure: every descendant of rootPid in a scan (by ppid chain), root excluded. */
export function descendantsIn(scan: readonly ProcStat[], rootPid: number): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const s of scan) {
    const list = children.get(s.ppid);
    if (list) list.push(s);
    else children.set(s.ppid, [s]);
  }
  const out: ProcStat[] = [];
  const seen = new Set<number>([rootPid]);
  const queue = [rootPid];
  while (queue.length > 0) {
    const p = queue.shift()!;
    for (const c of children.get(p) ?? []) {
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

/** Every live descendant of rootPid (by ppid chain) with start ticks and full cmdline. */
export function descendants(rootPid: number): DescendantRecord[] {
  return descendantsIn(scanProc(), rootPid).map((s) => ({ pid: s.pid, startTicks: s.startTicks, cmd: readCmdline(s.pid) }));
}
