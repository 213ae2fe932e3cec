import { statSync } from 'node:fs';
import { parseCmdline, parsePasswd, parseUptime, type ProcStat } from './parse-proc.js';
import { eachPid, listPids, readSmallSync, readStatSync, readText } from './proc-files.js';
import type { ProcessInfo } from '../types.js';

export { classifyEngineCmd, engineProcesses } from './engine-procs.js';
export { readProcStat } from './proc-files.js';

/**
 * Clock ticks per second for /proc/PID/stat starttime. The kernel exports USER_HZ = 100 to user
 * space on x86 and arm64 (include/asm-generic/param.h; `getconf CLK_TCK` prints 100), so no
 * program needs to run for it.
 */
export const CLK_TCK = 100;

interface Context {
  users: Map<number, string>;
  uptimeSec: number | null;
}

/**
 * One process as the pass over /proc found it: pid and full command line read at once (every
 * caller classifies by command line), the rest (parent, group, start, user, age) read from
 * /proc/PID on first ask and kept. Callers look at those only for the few processes they report
 * (engines, their ancestors, GPU apps, port holders), so a machine with thousands of processes
 * costs one command-line read each. A process gone by the time it is asked about keeps what was
 * known: its command line, and nulls (ppid 0).
 */
class ProcEntry implements ProcessInfo {
  private stat: ProcStat | null | undefined;
  private owner: number | null | undefined;

  constructor(
    readonly pid: number,
    private readonly cmdline: string,
    private readonly ctx: Context,
  ) {}

  private st(): ProcStat | null {
    if (this.stat === undefined) this.stat = readStatSync(this.pid);
    return this.stat;
  }

  /** Full command line; `[comm]` for kernel threads and zombies, as ps shows them. */
  get cmd(): string {
    if (this.cmdline) return this.cmdline;
    const s = this.st();
    return s ? `[${s.comm}]${s.state === 'Z' ? ' <defunct>' : ''}` : '';
  }

  get name(): string {
    return this.st()?.comm ?? '';
  }

  get ppid(): number {
    return this.st()?.ppid ?? 0;
  }

  get pgid(): number | null {
    return this.st()?.pgid ?? null;
  }

  get startTicks(): number | null {
    return this.st()?.startTicks ?? null;
  }

  get ageMs(): number | null {
    const ticks = this.startTicks;
    if (ticks === null || this.ctx.uptimeSec === null) return null;
    return Math.max(0, Math.round((this.ctx.uptimeSec - ticks / CLK_TCK) * 1000));
  }

  get uid(): number | null {
    if (this.owner === undefined) {
      try {
        this.owner = statSync(`/proc/${this.pid}`).uid; // the owner of /proc/PID: the process's user
      } catch {
        this.owner = null;
      }
    }
    return this.owner;
  }

  get user(): string | null {
    const uid = this.uid;
    return uid === null ? null : this.ctx.users.get(uid) ?? String(uid);
  }

  toJSON(): ProcessInfo {
    return { pid: this.pid, ppid: this.ppid, uid: this.uid, user: this.user, cmd: this.cmd, name: this.name, startTicks: this.startTicks, ageMs: this.ageMs, pgid: this.pgid };
  }
}

/**
 * Every process with its full command line, from one pass over /proc that reads one file per
 * process (no `ps`, no executable paths nobody reports); parent, group, start ticks, user and age
 * of a process are read when first asked for (ProcEntry). The pass yields to the event loop every
 * few milliseconds. A process that exits during the pass is left out: it no longer exists.
 */
export async function listProcesses(): Promise<ProcessInfo[]> {
  const [passwd, uptime] = await Promise.all([readText('/etc/passwd'), readText('/proc/uptime')]);
  const ctx: Context = { users: passwd ? parsePasswd(passwd) : new Map<number, string>(), uptimeSec: uptime ? parseUptime(uptime) : null };
  return eachPid(listPids(), (pid) => {
    const raw = readSmallSync(`/proc/${pid}/cmdline`);
    return raw === null ? null : new ProcEntry(pid, parseCmdline(raw).trim(), ctx);
  });
}
