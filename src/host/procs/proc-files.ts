import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { parseCmdline, parseProcStat, type ProcStat } from './parse-proc.js';

// Small readers of /proc files shared by the process, HF lock and port adapters. Each returns
// null when the file is gone (the process exited) or unreadable (another user's, no /proc).
//
// Scans of every process read thousands of tiny files: the sync readers below go through one
// reused buffer (open, read, close: no fstat, no allocation per file), measured 5-10x cheaper than
// fs.promises.readFile, whose thread-pool round trip costs more than the read itself. Callers that
// visit every pid use eachPid(), which yields to the event loop every few milliseconds.

let buf = Buffer.allocUnsafe(16 * 1024);

/**
 * A whole small /proc file, sync; null when gone or unreadable. procfs hands over everything that
 * fits in one read (cmdline, environ, stat: the kernel loops over the pages itself), so a read
 * that leaves room in the buffer is the end: no second read just to see 0 (a quarter of the
 * syscalls of a scan). A command line longer than the buffer grows it and reads on.
 */
export function readSmallSync(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const room = buf.length - n;
      const got = readSync(fd, buf, n, room, null);
      n += got;
      if (got < room) break;
    }
    return buf.toString('utf8', 0, n);
  } catch {
    return null; // ESRCH: the process went away between open and read
  } finally {
    closeSync(fd);
  }
}

/** Every pid /proc lists now, ascending; [] without /proc. */
export function listPids(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const n of names) {
    const c = n.charCodeAt(0);
    if (c >= 48 && c <= 57) out.push(Number(n));
  }
  return out.sort((a, b) => a - b);
}

/** How long a scan may hold the event loop before it lets timers, I/O and renders run. */
export const SCAN_SLICE_MS = 4;

const yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * fn over every pid (sync reads, cheap), in slices of at most SCAN_SLICE_MS with a yield to the
 * event loop between them; the non-null results in pid order. `done()` true stops early.
 */
export async function eachPid<T>(pids: readonly number[], fn: (pid: number) => T | null, sliceMs = SCAN_SLICE_MS, done?: () => boolean): Promise<T[]> {
  const out: T[] = [];
  let sliceStart = performance.now();
  for (let i = 0; i < pids.length; i++) {
    const v = fn(pids[i]);
    if (v !== null) out.push(v);
    if (done?.()) break;
    if ((i & 15) === 15 && performance.now() - sliceStart > sliceMs) {
      await yieldNow();
      sliceStart = performance.now();
    }
  }
  return out;
}

/** /proc/PID/stat, sync (zombies included: callers decide); null when gone. */
export function readStatSync(pid: number): ProcStat | null {
  const text = readSmallSync(`/proc/${pid}/stat`);
  return text === null ? null : parseProcStat(text);
}

export async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/** The /proc/PID/stat facts of one process; null when it has gone (or there is no /proc). */
export async function readProcStat(pid: number): Promise<ProcStat | null> {
  const text = await readText(`/proc/${pid}/stat`);
  return text === null ? null : parseProcStat(text);
}

/** The command line of a pid (NULs as spaces), null when it is gone, unreadable or empty. */
export async function cmdOf(pid: number): Promise<string | null> {
  const raw = await readText(`/proc/${pid}/cmdline`);
  if (raw === null) return null;
  return parseCmdline(raw) || null;
}

/** The real uid owning a pid (owner of /proc/PID); null when it is gone or there is no /proc. */
export async function uidOf(pid: number): Promise<number | null> {
  try {
    return (await stat(`/proc/${pid}`)).uid;
  } catch {
    return null;
  }
}

/** uid of each pid that still exists. */
export async function uidsOf(pids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  await Promise.all(pids.map(async (pid) => {
    const uid = await uidOf(pid);
    if (uid !== null) out.set(pid, uid);
  }));
  return out;
}
