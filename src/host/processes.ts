import psList from 'ps-list';
import { parsePasswd, parseUptime } from './parse-proc.js';
import { readProcStat, readText } from './proc-files.js';
import type { ProcessInfo } from './types.js';

export { classifyEngineCmd, engineProcesses } from './engine-procs.js';
export { readProcStat } from './proc-files.js';

/**
 * Clock ticks per second for /proc/PID/stat starttime. The kernel exports USER_HZ = 100 to user
 * space on x86 and arm64 (include/asm-generic/param.h; `getconf CLK_TCK` prints 100), so no
 * program needs to run for it.
 */
export const CLK_TCK = 100;

/**
 * Every process with its full command line (ps-list: `ps awwxo pid,args`), enriched from
 * /proc/PID/stat (ppid, pgid, start ticks) and /etc/passwd (user). A process that exits between
 * `ps` and the /proc read is left out: it no longer exists.
 */
export async function listProcesses(): Promise<ProcessInfo[]> {
  const [list, passwd, uptime, selfStat] = await Promise.all([
    psList({ all: true }),
    readText('/etc/passwd'),
    readText('/proc/uptime'),
    readText('/proc/self/stat'),
  ]);
  const hasProc = selfStat !== null;
  const users = passwd ? parsePasswd(passwd) : new Map<number, string>();
  const uptimeSec = uptime ? parseUptime(uptime) : null;

  const enriched = await Promise.all(list.map(async (p): Promise<ProcessInfo | null> => {
    const stat = hasProc ? await readProcStat(p.pid) : null;
    if (hasProc && stat === null) return null; // vanished mid-scan
    const uid = p.uid ?? null;
    const startTicks = stat?.startTicks ?? null;
    let ageMs: number | null = null;
    if (startTicks !== null && uptimeSec !== null) ageMs = Math.max(0, Math.round((uptimeSec - startTicks / CLK_TCK) * 1000));
    else if (p.startTime) ageMs = Math.max(0, Date.now() - p.startTime.getTime());
    return {
      pid: p.pid,
      ppid: stat?.ppid ?? p.ppid,
      uid,
      user: uid === null ? null : users.get(uid) ?? String(uid),
      cmd: p.cmd || p.name,
      name: p.name,
      startTicks,
      ageMs,
      pgid: stat?.pgid ?? null,
    };
  }));
  return enriched.filter((p): p is ProcessInfo => p !== null);
}
