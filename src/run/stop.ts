import { ancestorsIn, descendantsIn, membersOf, readCmdline, scanAround, scanProc, type ProcStat } from './proc.js';
import { statSync } from 'node:fs';
import { indexScan, sameIn, signallable, type ScanIndex } from './liveness.js';
import { realClock, type Clock } from './clock.js';
import { escalationStep, nextScanInMs } from './policy/escalation.js';
import { notOursNote, notYetNote, proofOf, type ProofKind } from './run-marker-proof.js';

// Stopping a run the way vLLM needs it (FACTS §3): SIGTERM to the whole process group so the
// EngineCore children shut down cleanly and free GPU memory, wait until the GROUP is empty (not
// just the leader), SIGKILL the group at the grace deadline, and keep signalling while anything
// of it remains, also after the leader is gone (process-compose #520 lost the escalation there).
// The machine (scan, kill, clock) comes in as StopDeps so the rare paths run in unit tests.
//
// Cost follows the run, not the machine: a look at every process (a workstation runs thousands:
// 30-50 ms each) is taken only where a decision needs it: at the start, before the first SIGKILL,
// and before a target is called done or given up. While SIGTERM works, each tick reads only the
// processes already known alive and their descendants (children files). A member that only a full
// look can find (forked and left behind by a process that exited between two ticks, adopted by
// init) is found by the full look that precedes every "done", so nothing is declared gone early.

// The targets and results of a stop (stop-types.ts), reached here as before.
export { ALREADY_GONE, processTargets, type StopResult, type StopSnapshot, type StopTarget, type StopTargetState, type Survivor } from './stop-types.js';
import { ALREADY_GONE, type StopResult, type StopSnapshot, type StopTarget, type Survivor } from './stop-types.js';

export interface StopOptions {
  graceMs: number;
  /** Each target as it is done. */
  onProgress?: (r: StopResult) => void;
  /** The whole stop after the first SIGTERMs, after any target changes phase, and on escalate(). */
  onState?: (s: StopSnapshot) => void;
  /** /proc poll interval (default 15 ms: teardown of healthy trees must take well under a second). */
  pollMs?: number;
  /** How long SIGKILLed processes get to vanish before they count as remaining (D state, zombies of slow reapers). */
  killWaitMs?: number;
}

/** The machine as the stop loop sees it; defaults are the real ones. */
export interface StopDeps {
  /** Every live (non-zombie) process. */
  scan(): ProcStat[];
  /** These pids (the live ones) and every live descendant of them: a look proportional to the run.
   *  Absent, or null from it (a kernel without children files): every tick takes a full scan(). */
  scanAround?(pids: readonly number[]): ProcStat[] | null;
  /** Like process.kill: throws an errno error (ESRCH when gone). */
  kill(pid: number, sig: NodeJS.Signals): void;
  cmdline(pid: number): string;
  clock: Pick<Clock, 'now' | 'sleep'>;
  /** Never signalled, nor its ancestors, whatever a record says. */
  selfPid: number;
  /** Our uid: only processes it owns are ever signalled (as root too: root's teardown must not hit
   *  another user's process a record names). Absent: no ownership check (fake process tables). */
  uid?: number | null;
  /** Owner uid of a live pid (null: gone). */
  owner?(pid: number): number | null;
  /** Whether a live pid proves to be a run's by its marker (run-marker-proof.ts); 'unsure': it showed no
   *  environment yet (an exec in progress); 'gone': it ended as we looked. Absent: not checked (fake process tables). */
  proves?(pid: number, marker: string, as: ProofKind): boolean | 'unsure' | 'gone';
}

export const realStopDeps: StopDeps = {
  scan: scanProc,
  scanAround,
  kill: (pid, sig) => void process.kill(pid, sig),
  cmdline: readCmdline,
  clock: realClock,
  selfPid: process.pid,
  uid: typeof process.getuid === 'function' ? process.getuid() : null,
  owner(pid) {
    try {
      return statSync(`/proc/${pid}`).uid;
    } catch {
      return null;
    }
  },
  proves: proofOf,
};

/** Whether a live process is ours to signal, its owner remembered per process (pid and start ticks). */
function ownership(deps: StopDeps): (pid: number, index: ScanIndex) => boolean {
  if (deps.uid === undefined || deps.uid === null || !deps.owner) return () => true;
  const seen = new Map<string, boolean>();
  return (pid, index) => {
    const key = `${pid}:${index.get(pid)?.startTicks}`;
    let ok = seen.get(key);
    if (ok === undefined) {
      ok = deps.owner!(pid) === deps.uid;
      seen.set(key, ok);
    }
    return ok;
  };
}

export interface StopHandle {
  readonly done: Promise<{ stopped: StopResult[]; remaining: Survivor[] }>;
  /** SIGKILL now instead of at the grace deadline (a second Ctrl-C; `by`: the signal that asked). Idempotent. */
  escalate(by?: NodeJS.Signals): void;
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
  alive: number[];
  survivors: Survivor[];
}

function send(deps: StopDeps, pid: number, sig: NodeJS.Signals): string | null {
  try {
    deps.kill(pid, sig);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return null;
    // Stryker disable next-line EqualityOperator: pid 0 never reaches send(): only signallable pids (> 1) and their negated groups are signalled
    return `${sig} to ${pid < 0 ? `group ${-pid}` : `pid ${pid}`}: ${code ?? String(err)}`;
  }
}

function aliveOf(tr: Tracked, scan: readonly ProcStat[], index: ScanIndex, protectedPids: Set<number>, ours: (pid: number, index: ScanIndex) => boolean): number[] {
  const out = new Set<number>();
  if (tr.group !== null) {
    // Stryker disable next-line UnaryOperator: the fallback is never taken: membersOf and index come from the same scan
    for (const m of membersOf(scan, tr.group)) if ((index.get(m)?.startTicks ?? -1) >= tr.minTicks) out.add(m);
  }
  for (const [pid, ticks] of tr.watch) if (sameIn(index, pid, ticks)) out.add(pid);
  // Children forked (or escaped with setsid) while shutting down belong to the target too. Their
  // start time is the one seen now: a watched pid that died and came back as a new child of the
  // run (a reused engine pid) is followed as that child, also once init adopts it.
  for (const pid of [...out]) {
    for (const d of descendantsIn(scan, pid)) {
      tr.watch.set(d.pid, d.startTicks);
      out.add(d.pid);
    }
  }
  for (const p of protectedPids) out.delete(p);
  for (const p of out) if (!signallable(p) || !ours(p, index)) out.delete(p);
  return [...out].sort((a, b) => a - b);
}

function signalAll(
  deps: StopDeps, tr: Tracked, alive: number[], scan: readonly ProcStat[], index: ScanIndex, sig: NodeJS.Signals,
  ours: (pid: number, index: ScanIndex) => boolean,
): void {
  const errors: string[] = [];
  // A group signal reaches every member: sent only while each one is ours (else one by one).
  const group = signallable(tr.group) && membersOf(scan, tr.group).every((m) => ours(m, index)) ? tr.group : null;
  if (group !== null) {
    const e = send(deps, -group, sig);
    if (e) errors.push(e);
  }
  for (const pid of alive) {
    if (index.get(pid)?.pgid === group) continue; // reached by the group signal (a pgid is never null)
    const e = send(deps, pid, sig);
    if (e) errors.push(e);
  }
  if (errors.length > 0 && !tr.result.note) tr.result.note = errors[0];
}

/**
 * What of a target we may signal, decided once before any signal: the pid-reuse guard (start
 * ticks), never pid/pgid 0 or 1, only processes of our uid, and a group only while its live leader
 * is still in it or a recorded descendant (same start ticks) lives in it: a group whose leader is
 * gone and that nothing recorded proves may be a stranger that reused the pgid.
 */
function track(
  t: StopTarget, scan: readonly ProcStat[], index: ScanIndex, ownGroup: number, ours: (pid: number, index: ScanIndex) => boolean, deps: StopDeps,
): Tracked {
  const leader = signallable(t.pid) ? index.get(t.pid) : undefined;
  const same = signallable(t.pid) && sameIn(index, t.pid, t.startTicks);
  const tr: Tracked = {
    target: t,
    result: { name: t.name, pid: t.pid, signal: null, ms: 0 },
    group: null,
    minTicks: t.startTicks ?? Number.POSITIVE_INFINITY,
    watch: new Map(),
    killed: false,
    done: false,
    alive: [],
    survivors: [],
  };
  if (!signallable(t.pid)) {
    tr.result.note = `pid ${t.pid} is not a process teardown may signal; not signalled`;
    return tr;
  }
  const recorded = (t.descendants ?? []).filter((d) => signallable(d.pid) && sameIn(index, d.pid, d.startTicks));
  const groupOk = !t.single && signallable(t.pgid) && t.pgid !== ownGroup && t.startTicks !== null;
  if (same && !ours(t.pid, index)) {
    tr.result.note = `pid ${t.pid} belongs to another user: not signalled`;
    return tr;
  }
  // The run marker (a start time can be copied, the marker cannot): a live leader carries it, and
  // what lives in its group or under it is the run's by that. Without the leader, each recorded
  // descendant proves itself (an engine's own environment may be wiped: run-marker-proof.ts).
  const proofFor = (pid: number, as: ProofKind) => !t.proof || !deps.proves || deps.proves(pid, t.proof.marker, as);
  const proven = (pid: number, as: ProofKind) => proofFor(pid, as) === true;
  const leaderProof = same ? proofFor(t.pid, t.proof?.as ?? 'leader') : true;
  if (leaderProof !== true) {
    // Not yet proven is not a stranger: teardown looks again after this round (teardown.ts).
    tr.result.note = leaderProof === 'gone' ? ALREADY_GONE : leaderProof === 'unsure' ? notYetNote(t.pid) : notOursNote(t.pid);
    return tr;
  }
  const descendants = same ? recorded : recorded.filter((d) => proven(d.pid, 'engine'));
  if (!leader && descendants.length === 0 && recorded.length > 0) {
    tr.result.note = notOursNote(recorded[0].pid);
    return tr;
  }
  const provenByDescendant = descendants.some((d) => index.get(d.pid)?.pgid === t.pgid);
  if (same) {
    tr.watch.set(t.pid, t.startTicks);
    if (groupOk && (leader!.pgid === t.pgid || provenByDescendant)) tr.group = t.pgid;
  } else if (leader) {
    tr.result.note = t.startTicks === null
      ? `pid ${t.pid} is alive but its start time was never recorded; not signalled`
      : `pid ${t.pid} now belongs to another process (start time differs): recycled, not signalled`;
  } else if (groupOk && provenByDescendant) {
    // Leader gone: its group lives on in a recorded descendant (the pgid cannot be reused meanwhile).
    tr.group = t.pgid;
    tr.result.note = 'leader had already exited; its group had not';
  }
  for (const d of descendants) tr.watch.set(d.pid, d.startTicks);
  return tr;
}

/** All targets concurrently: pid-reuse guard (isSameProcess; a recycled pid is never signalled, note says so),
 *  SIGTERM to the group, wait until the GROUP is empty (not just the leader; poll /proc every ~20 ms), SIGKILL the
 *  group at the grace deadline, then verify: group members and recorded descendants that are still the same
 *  processes -> SIGKILL them and report them in `remaining` if they still survive. */
export function startStop(targets: StopTarget[], opts: StopOptions, deps: StopDeps = realStopDeps): StopHandle {
  const pollMs = opts.pollMs ?? 15;
  const killWaitMs = opts.killWaitMs ?? 2000;
  const { clock } = deps;
  const t0 = clock.now();
  let killAt = t0 + Math.max(0, opts.graceMs);
  // escalate() moved killAt forward: the SIGKILLs that follow were asked for, not earned by the grace.
  let forced = false;
  let forcedBy: NodeJS.Signals | undefined;
  let wake: () => void = () => {};

  let scan = deps.scan();
  let index = indexScan(scan);
  // Never ourselves or the shell that runs us, whatever a record says.
  const protectedPids = new Set<number>([deps.selfPid, ...ancestorsIn(scan, deps.selfPid)]);
  // Stryker disable next-line UnaryOperator: ownGroup is only compared with signallable pgids (> 1): -1 and +1 both match none
  const ownGroup = index.get(deps.selfPid)?.pgid ?? -1;
  const ours = ownership(deps);
  const tracked = targets.map((t) => track(t, scan, index, ownGroup, ours, deps));

  const snapshot = () => {
    if (!opts.onState) return;
    const now = clock.now();
    opts.onState({
      killAt,
      killInMs: Math.max(0, killAt - now),
      targets: tracked.map((tr) => ({
        name: tr.target.name, pid: tr.target.pid, phase: tr.done ? 'done' : tr.killed ? 'killing' : 'terminating',
        signal: tr.result.signal, alive: tr.alive, ...(tr.result.note ? { note: tr.result.note } : {}), ...(tr.result.forced ? { forced: true } : {}), ...(tr.result.forcedBy ? { forcedBy: tr.result.forcedBy } : {}),
      })),
    });
  };
  const finish = (tr: Tracked, now: number) => {
    tr.done = true;
    tr.alive = [];
    tr.result.ms = Math.round(now - t0);
    opts.onProgress?.(tr.result);
  };

  for (const tr of tracked) {
    tr.alive = aliveOf(tr, scan, index, protectedPids, ours);
    if (tr.alive.length === 0) {
      if (!tr.result.note) tr.result.note = ALREADY_GONE;
      finish(tr, t0);
      continue;
    }
    tr.result.signal = 'SIGTERM';
    signalAll(deps, tr, tr.alive, scan, index, 'SIGTERM', ours);
  }
  snapshot();

  /** Looks again: the known live pids and their descendants (null: only a full scan will do). */
  const look = (full: boolean): boolean => {
    const known = [...new Set(tracked.flatMap((tr) => (tr.done ? [] : [...tr.alive, ...tr.watch.keys()])))];
    const around = full ? null : deps.scanAround?.(known) ?? null;
    scan = around ?? deps.scan();
    index = indexScan(scan);
    for (const tr of tracked) if (!tr.done) tr.alive = aliveOf(tr, scan, index, protectedPids, ours);
    return around === null;
  };
  const stepOf = (tr: Tracked, now: number) => escalationStep({ killed: tr.killed, aliveCount: tr.alive.length, now, killAt, killWaitMs });

  const loop = async () => {
    while (tracked.some((t) => !t.done)) {
      const woken = new Promise<void>((r) => (wake = r));
      await Promise.race([clock.sleep(nextScanInMs({ now: clock.now(), t0, killAt, pollMs })), woken]);
      const now = clock.now();
      const full = look(false);
      // Waiting (or SIGKILLing again, which reaches the whole group) needs no full look; calling a
      // target done, the first SIGKILL and giving up do.
      if (!full && tracked.some((tr) => !tr.done && !['wait', 'kill-again'].includes(stepOf(tr, now)))) look(true);
      let changed = false;
      for (const tr of tracked) {
        if (tr.done) continue;
        switch (stepOf(tr, now)) {
          case 'finish':
            finish(tr, now);
            changed = true;
            break;
          case 'kill':
            tr.killed = true;
            tr.result.signal = 'SIGKILL';
            if (forced) {
              tr.result.forced = true;
              if (forcedBy) tr.result.forcedBy = forcedBy;
            }
            signalAll(deps, tr, tr.alive, scan, index, 'SIGKILL', ours);
            changed = true;
            break;
          case 'kill-again':
            signalAll(deps, tr, tr.alive, scan, index, 'SIGKILL', ours);
            break;
          case 'give-up':
            tr.survivors = tr.alive.map((pid) => ({
              name: tr.target.name, pid, cmd: deps.cmdline(pid), startTicks: index.get(pid)?.startTicks ?? null, state: index.get(pid)?.state ?? null,
            }));
            tr.result.note = `${tr.alive.length} process(es) survived SIGKILL: ${tr.alive.join(', ')}`;
            finish(tr, now);
            changed = true;
            break;
          // Stryker disable next-line ConditionalExpression: this case only breaks; without it the switch matches nothing and does the same
          case 'wait':
            break;
        }
      }
      if (changed) snapshot();
    }
    return { stopped: tracked.map((t) => t.result), remaining: tracked.flatMap((t) => t.survivors) };
  };
  const done = loop();

  return {
    done,
    escalate(by) {
      const now = clock.now();
      if (killAt <= now) return;
      killAt = now;
      forced = true;
      forcedBy = by;
      snapshot();
      wake(); // the loop scans at once and sends SIGKILL on that fresh scan
    },
  };
}

/** startStop, awaited (teardown and callers that need no escalation). */
export function stopTargets(
  targets: StopTarget[],
  opts: StopOptions,
  deps: StopDeps = realStopDeps,
): Promise<{ stopped: StopResult[]; remaining: Survivor[] }> {
  return startStop(targets, opts, deps).done;
}
