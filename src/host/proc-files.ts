import { readFile, stat } from 'node:fs/promises';
import { parseCmdline, parseProcStat, type ProcStat } from './parse-proc.js';

// Small readers of /proc files shared by the process, HF lock and port adapters. Each returns
// null when the file is gone (the process exited) or unreadable (another user's, no /proc).

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
