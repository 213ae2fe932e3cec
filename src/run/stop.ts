import { ancestorsIn, descendantsIn, membersOf, readCmdline, scanProc, type ProcStat } from './proc.js';
import { indexScan, sameIn, type ScanIndex } from './liveness.js';
import type { DescendantRecord } from './types.js';

// Stopping a run the way vLLM needs it (FACTS §3): SIGTERM to the whole process group so the
// EngineCore children shut down cleanly and free GPU memory, wait until the GROUP is empty (not
// just the leader), SIGKILL the group at the grace deadline, and keep signalling while anything
// of it remains, also after the leader is gone (process-compose #520 lost the escalation there).

export interface StopTarget {
  name: string; pid: number; pgid: number; startTicks: number | null;
  /** Engine processes recorded while running (VLLM::*), checked and killed too if they survive the group. */
  descendants?: DescendantRecord[];
  /** Signal only this pid (and its descendants), never its group: for processes whose group is not ours
   *  (a supervisor started from a shell, a leftover engine process). */
  single?: boolean;
}
export interface StopResult { name: string; pid: number; signal: 'SIGTERM' | 'SIGKILL' | null; ms: number; note?: string }
export interface Survivor { name: string; pid: number; cmd: string }

export interface StopOptions {
  graceMs: number;
  onProgress?: (r: StopResult) => void;
  /** /proc poll interval (default 15 ms: teardown of healthy trees must take well under a second). */
  pollMs?: number;
  /** How long SIGKILLed processes get to vanish before they count as remaining (D state, zombies of slow reapers). */
  killWaitMs?: number;
}

interface Tracked {
  target: StopTarget;
  result: StopResult;
  /** Process group to signal; null when the group is not (or no longer) ours. */
  group: number | null;
  /** Group members must have started no earlier than the leader (guards a reused pgid). */
  minTicks: number;
  /** Pids outside the group that belong to the target (leader, escaped descendants): pid -> start ticks. */
  watch: Map<number, number | null>;
  killed: boolean;
  done: boolean;
  survivors: Survivor[];
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function send(pid: number, sig: NodeJS.Signals): string | null {
  try {
    process.kill(pid, sig);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ESRCH' ? null : `${sig} to ${pid < 0 ? `group ${-pid}` : `pid ${pid}`}: ${code ?? String(err)}`;
  }
}

function aliveOf(tr: Tracked, scan: readonly ProcStat[], index: ScanIndex, protectedPids: Set<number>): number[] {
  const out = new Set<number>();
  if (tr.group !== null) {
    for (const m of membersOf(scan, tr.group)) if ((index.get(m)?.startTicks ?? -1) >= tr.minTicks) out.add(m);
  }
  for (const [pid, ticks] of tr.watch) if (sameIn(index, pid, ticks)) out.add(pid);
  // Children forked (or escaped with setsid) while shutting down belong to the target too.
  for (const pid of [...out]) {
    for (const d of descendantsIn(scan, pid)) {
      if (!tr.watch.has(d.pid)) tr.watch.set(d.pid, d.startTicks);
      out.add(d.pid);
    }
  }
  for (const p of protectedPids) out.delete(p);
  return [...out].sort((a, b) => a - b);
}

function signalAll(tr: Tracked, alive: number[], index: ScanIndex, sig: NodeJS.Signals): void {
  const errors: string[] = [];
  if (tr.group !== null) {
    const e = send(-tr.group, sig);
    if (e) errors.push(e);
  }
  for (const pid of alive) {
    if (tr.group !== null && index.get(pid)?.pgid === tr.group) continue; // reached by the group signal
    const e = send(pid, sig);
    if (e) errors.push(e);
  }
  if (errors.length > 0 && !tr.result.note) tr.result.note = errors[0];
}

/** All targets concurrently: pid-reuse guard (isSameProcess; a recycled pid is never signalled, note says so),
 *  SIGTERM to the group, wait until the GROUP is empty (not just the leader; poll /proc every ~20 ms), SIGKILL the
 *  group at the grace deadline, then verify: group members and recorded descendants that are still the same
 *  processes -> SIGKILL them and report them in `remaining` if they still survive. */
export async function stopTargets(
  targets: StopTarget[],
  opts: { graceMs: number; onProgress?: (r: StopResult) => void } & StopOptions,
): Promise<{ stopped: StopResult[]; remaining: Survivor[] }> {
  const pollMs = opts.pollMs ?? 15;
  const killWaitMs = opts.killWaitMs ?? 2000;
  const t0 = performance.now();
  let scan = scanProc();
  let index = indexScan(scan);
  // Never ourselves or the shell that runs us, whatever a record says.
  const protectedPids = new Set<number>([process.pid, ...ancestorsIn(scan, process.pid)]);
  const ownGroup = index.get(process.pid)?.pgid ?? -1;

  const tracked: Tracked[] = targets.map((t) => {
    const leader = index.get(t.pid);
    const same = sameIn(index, t.pid, t.startTicks);
    const tr: Tracked = {
      target: t,
      result: { name: t.name, pid: t.pid, signal: null, ms: 0 },
      group: null,
      minTicks: t.startTicks ?? Number.POSITIVE_INFINITY,
      watch: new Map(),
      killed: false,
      done: false,
      survivors: [],
    };
    const groupOk = !t.single && t.pgid > 1 && t.pgid !== ownGroup;
    if (same) {
      tr.watch.set(t.pid, t.startTicks);
      if (groupOk) tr.group = t.pgid;
    } else if (leader) {
      tr.result.note = t.startTicks === null
        ? `pid ${t.pid} is alive but its start time was never recorded; not signalled`
        : `pid ${t.pid} now belongs to another process (start time differs): recycled, not signalled`;
    } else if (groupOk && t.startTicks !== null) {
      // Leader gone: its group lives on while any member does (the pgid cannot be reused meanwhile).
      if (membersOf(scan, t.pgid).some((m) => (index.get(m)?.startTicks ?? -1) >= t.startTicks!)) {
        tr.group = t.pgid;
        tr.result.note = 'leader had already exited; its group had not';
      }
    }
    for (const d of t.descendants ?? []) if (sameIn(index, d.pid, d.startTicks)) tr.watch.set(d.pid, d.startTicks);
    return tr;
  });

  const finish = (tr: Tracked, now: number) => {
    tr.done = true;
    tr.result.ms = Math.round(now - t0);
    opts.onProgress?.(tr.result);
  };

  for (const tr of tracked) {
    const alive = aliveOf(tr, scan, index, protectedPids);
    if (alive.length === 0) {
      if (!tr.result.note) tr.result.note = 'already gone';
      finish(tr, t0);
      continue;
    }
    tr.result.signal = 'SIGTERM';
    signalAll(tr, alive, index, 'SIGTERM');
  }

  const deadline = t0 + Math.max(0, opts.graceMs);
  while (tracked.some((t) => !t.done)) {
    // Fast while a clean shutdown is likely; then a lighter pace (a /proc scan reads every process),
    // waking exactly at the deadline so SIGKILL is never late.
    const now0 = performance.now();
    const pace = now0 - t0 < 1000 || (now0 >= deadline && now0 - deadline < 500) ? pollMs : Math.max(pollMs, 50);
    await delay(now0 < deadline ? Math.max(1, Math.min(pace, deadline - now0)) : pace);
    scan = scanProc();
    index = indexScan(scan);
    const now = performance.now();
    for (const tr of tracked) {
      if (tr.done) continue;
      const alive = aliveOf(tr, scan, index, protectedPids);
      if (alive.length === 0) {
        finish(tr, now);
      } else if (!tr.killed && now >= deadline) {
        tr.killed = true;
        tr.result.signal = 'SIGKILL';
        signalAll(tr, alive, index, 'SIGKILL');
      } else if (tr.killed) {
        if (now >= deadline + killWaitMs) {
          tr.survivors = alive.map((pid) => ({ name: tr.target.name, pid, cmd: readCmdline(pid) }));
          tr.result.note = `${alive.length} process(es) survived SIGKILL: ${alive.join(', ')}`;
          finish(tr, now);
        } else {
          // Keep signalling while members remain: the leader may be gone, new members may appear.
          signalAll(tr, alive, index, 'SIGKILL');
        }
      }
    }
  }
  return { stopped: tracked.map((t) => t.result), remaining: tracked.flatMap((t) => t.survivors) };
}
