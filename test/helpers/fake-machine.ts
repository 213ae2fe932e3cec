import type { ProcStat } from '../../src/run/proc.js';
import type { StopDeps } from '../../src/run/stop.js';

// A process table and a clock in memory, for the stop loop (src/run/stop.ts StopDeps): time only
// moves when the code under test sleeps, so deadlines are exact and nothing really waits.

export interface FakeProc {
  pid: number;
  ppid: number;
  pgid: number;
  startTicks: number;
  cmd: string;
  /** SIGTERM -> gone this many ms later; null: ignores SIGTERM. Default 0 (at the next look). */
  termExitMs?: number | null;
  /** Survives SIGKILL (D state). */
  unkillable?: boolean;
  /** Its state letter in /proc/PID/stat (default S; D for one stuck in the kernel). */
  state?: string;
  /** Gone on its own at this time (ms). */
  exitAt?: number;
  /** Owner uid (default 1000, the uid the stop runs as). */
  uid?: number;
}

export interface SignalSent { t: number; pid: number; sig: NodeJS.Signals }

export class FakeMachine {
  t = 0;
  readonly signals: SignalSent[] = [];
  /** Looks at the whole table (scan()), and looks around given pids (scanAround()). */
  fullScans = 0;
  partialScans = 0;
  /** Called at every look at the table (after time moved), e.g. to act at a given time. */
  onScan: ((m: FakeMachine) => void) | null = null;
  private readonly procs = new Map<number, FakeProc & { termAt?: number }>();

  constructor(procs: FakeProc[] = []) {
    // The test runner's own process and its parent: never to be signalled.
    this.add({ pid: 1, ppid: 0, pgid: 1, startTicks: 1, cmd: 'init' });
    this.add({ pid: 10, ppid: 1, pgid: 10, startTicks: 5, cmd: 'bash' });
    this.add({ pid: 11, ppid: 10, pgid: 11, startTicks: 6, cmd: 'node dynamo-dev' });
    for (const p of procs) this.add(p);
  }

  add(p: FakeProc): void {
    this.procs.set(p.pid, { ...p });
  }

  remove(pid: number): void {
    this.procs.delete(pid);
  }

  alive(pid: number): boolean {
    this.settle();
    return this.procs.has(pid);
  }

  signalsTo(pid: number): SignalSent[] {
    return this.signals.filter((s) => s.pid === pid);
  }

  private settle(): void {
    for (const p of [...this.procs.values()]) {
      const termGone = p.termAt !== undefined && p.termExitMs !== null && this.t >= p.termAt + (p.termExitMs ?? 0);
      if (termGone || (p.exitAt !== undefined && this.t >= p.exitAt)) this.procs.delete(p.pid);
    }
  }

  private stat(p: FakeProc): ProcStat {
    return { pid: p.pid, comm: p.cmd.slice(0, 15), state: p.state ?? 'S', ppid: p.ppid, pgid: p.pgid, session: 1, startTicks: p.startTicks };
  }

  /** `around: false`: a machine without children files (every look is a full scan). */
  deps(o: { around?: boolean } = {}): StopDeps {
    const look = () => {
      this.settle();
      this.onScan?.(this);
      this.settle();
    };
    return {
      scan: () => {
        this.fullScans++;
        look();
        return [...this.procs.values()].map((p) => this.stat(p));
      },
      // The given pids and their descendants by parent, as the children files would show them.
      scanAround: o.around === false ? undefined : (pids) => {
        this.partialScans++;
        look();
        const out = new Map<number, ProcStat>();
        const queue = pids.filter((pid) => this.procs.has(pid));
        for (let i = 0; i < queue.length; i++) {
          if (out.has(queue[i])) continue;
          out.set(queue[i], this.stat(this.procs.get(queue[i])!));
          for (const c of this.procs.values()) if (c.ppid === queue[i]) queue.push(c.pid);
        }
        return [...out.values()];
      },
      kill: (pid, sig) => {
        this.settle();
        const hit = pid < 0 ? [...this.procs.values()].filter((p) => p.pgid === -pid) : [this.procs.get(pid)].filter((p) => p !== undefined);
        this.signals.push({ t: this.t, pid, sig });
        if (hit.length === 0) throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
        for (const p of hit) {
          if (sig === 'SIGKILL' && !p.unkillable) this.procs.delete(p.pid);
          else if (sig === 'SIGTERM' && p.termAt === undefined) p.termAt = this.t;
        }
      },
      cmdline: (pid) => this.procs.get(pid)?.cmd ?? '',
      clock: {
        now: () => this.t,
        sleep: async (ms) => {
          this.t += ms;
        },
      },
      selfPid: 11,
      uid: 1000,
      owner: (pid) => (this.procs.has(pid) ? this.procs.get(pid)!.uid ?? 1000 : null),
    };
  }
}
