import type { RunView } from './run-view.js';
import type { ProcessInfo } from '../host/types.js';
import { selectOrphans, orphanName } from './orphans.js';
import { ancestors, descendantsIn, membersOf, readCmdline, readStartTicks } from './proc.js';
import { keepSurvivors, survivorRecords } from './survivors.js';
import { livenessIn, markerFor, scanRuns } from './run-scan.js';
import { leftAlone, type ProofKind } from './run-marker-proof.js';
import { findRunView, listRunViews, readRun, writeRun } from './state.js';
import { processTargets, realStopDeps, stopTargets, type StopDeps, type StopResult, type StopSnapshot, type StopTarget, type Survivor } from './stop.js';
import type { RunRecord } from './types.js';
import { writeStopRequest } from './stop-request.js';
import { creditSupervisor, supervisorMayHaveEnded } from './teardown-credit.js';
import type { OtherRun } from './other-runs.js';
import { unreadableLine, unreadableRuns, type UnreadableRun } from './unreadable-runs.js';

// `teardown`: stop live runs (or one), optionally the user's leftover engine processes, and mark
// the records stopped. Logs are never touched.

/** How much longer than its processes a foreground supervisor gets to finish its own stop. */
const SUPERVISOR_EXTRA_MS = 3000;

export interface TeardownOptions {
  stateDir: string;
  runId?: string;
  graceMs: number;
  orphans: boolean;
  /** Called as each process is done (for streaming human output). */
  onProgress?: (r: TeardownResult) => void;
  /** The stop's state per run (who is still terminating, when SIGKILL is due), for a live line. */
  onState?: (run: string, s: StopSnapshot) => void;
  /** Called once the targets are known, before any signal. */
  onPlan?: (plan: { runs: RunView[]; notRunning: RunView[]; unreadable: UnreadableRun[] }) => void;
  /** The machine's processes for --orphans (default: all of /proc); a unit test passes only its own. */
  listProcesses?: () => Promise<ProcessInfo[]>;
  /** How the stops signal and look (default the real machine); a unit test makes a process outlive SIGKILL with it. */
  stopDeps?: StopDeps;
}

export interface TeardownResult extends StopResult {
  /** Run id, or null for an orphan. */
  run: string | null;
}

export interface TeardownOutcome {
  stopped: TeardownResult[];
  remaining: (Survivor & { run: string | null })[];
  runs: string[];
  /** Runs asked for (--run) that had nothing alive. */
  notRunning: string[];
  orphans: number;
  /** Things that went wrong beside the stop itself (a record that could not be updated). */
  warnings: string[];
  /** Runs whose record could not be read, with the processes carrying their marker (stopped here). */
  unreadable?: UnreadableRun[];
  /** With --orphans only: engine processes left alone because a live run of another state dir owns them. */
  otherRuns?: (OtherRun & { name: string })[];
}

/**
 * Pure: the stop targets of a run: its supervisor (when alive, never its group) and each started
 * process, each signalled only once it proves to carry the run's marker (`marker`; absent: unchecked).
 */
export function runTargets(view: RunView, supervisorAlive: boolean, marker?: string): StopTarget[] {
  const rec = view.record;
  const proof = (as: ProofKind) => (marker === undefined ? {} : { proof: { marker, as } });
  const out: StopTarget[] = [];
  if (supervisorAlive && rec.supervisor.pid !== process.pid) {
    // A foreground `up` stops its processes itself on SIGTERM; we stop them too, in parallel.
    out.push({ name: 'supervisor', pid: rec.supervisor.pid, pgid: rec.supervisor.pid, startTicks: rec.supervisor.startTicks, single: true, ...proof('supervisor') });
  }
  const targets = [...out, ...processTargets(rec.processes).map((t) => ({ ...t, ...proof('leader') }))];
  // What an earlier stop left alive after SIGKILL is tried again: those of a process are among its
  // descendants (its target follows them); any other alone, by its recorded start ticks.
  const covered = new Set(targets.flatMap((t) => [t.pid, ...(t.descendants ?? []).map((d) => d.pid)]));
  for (const s of rec.survivors ?? []) {
    if (!covered.has(s.pid)) targets.push({ name: s.name, pid: s.pid, pgid: s.pid, startTicks: s.startTicks, single: true, ...proof('engine') });
  }
  return targets;
}

/**
 * Pure: the record after teardown: every process not already ended is `stopped`; the run too when
 * nothing remains, or when what remains survived SIGKILL and is kept as the run's (`left`, by pid
 * and start ticks: status and the next teardown follow them). Something left that cannot be kept
 * so leaves the run in its state, never taken for over.
 */
export function markStopped(rec: RunRecord, results: StopResult[], clean: boolean, now = new Date(), left: readonly Survivor[] = []): RunRecord {
  const byName = new Map(results.map((r) => [r.name, r]));
  const over = clean || survivorRecords(left, now).length > 0;
  return keepSurvivors({
    ...rec,
    updatedAt: now.toISOString(),
    state: over ? (rec.state === 'failed' ? 'failed' : 'stopped') : rec.state,
    processes: rec.processes.map((p) => {
      const r = byName.get(p.name);
      const ended = p.state === 'exited' || p.state === 'failed' || p.state === 'stopped' || p.state === 'gone';
      if (ended && (!r || r.signal === null)) return p;
      if (p.pid === null) return { ...p, state: 'stopped' }; // was still waiting for its turn
      if (!over && r?.note?.includes('survived')) return p;
      return { ...p, state: 'stopped', signal: r?.signal ?? p.signal };
    }),
  }, clean ? [] : left, now);
}

/**
 * A target for a live pid no record names (found by the run marker, or under a process of the run):
 * that pid alone, never its group; with `proof`, signalled only once it proves to be the run's.
 */
function unrecordedTarget(pid: number, proof?: StopTarget['proof']): StopTarget | null {
  const startTicks = readStartTicks(pid);
  if (startTicks === null) return null;
  return { name: orphanName(readCmdline(pid)), pid, pgid: pid, startTicks, single: true, ...(proof ? { proof } : {}) };
}

const MARKED_NOTE = 'found by its run marker';

/**
 * Stops one run, then looks again: whatever of it still lives (a process that forked out of its
 * group meanwhile, one only the run marker names) is stopped in another round. What survives the
 * last round is reported as remaining, so "nothing remains" is only ever said of a fresh scan.
 */
/**
 * The first round: a foreground supervisor stops its own processes on SIGTERM and exits once they
 * are gone; it gets until a little after their SIGKILL, so it can tell its terminal who stopped
 * the run. Its SIGTERM goes first, so it knows the deaths that follow are a stop.
 */
async function firstRound(
  targets: StopTarget[], graceMs: number, onProgress: (r: StopResult) => void, onState?: (s: StopSnapshot) => void, deps: StopDeps = realStopDeps,
  record: () => Promise<RunRecord | null> = async () => null,
) {
  const sup = targets.filter((t) => t.name === 'supervisor' && t.single);
  const procs = targets.filter((t) => !sup.includes(t));
  if (sup.length === 0) {
    const a = await stopTargets(procs, { graceMs, onProgress, onState }, deps);
    return a;
  }
  // The supervisor stops the processes too, on our behalf: a line it may have earned (a process
  // found gone, one that ended on our SIGTERM when its SIGKILL was due) waits until it has exited
  // and its record is final, and says what it sent. The others are said as they end.
  let final: RunRecord | null | undefined;
  const held: StopResult[] = [];
  const shown = new Map<StopResult, StopResult>();
  let lines = Promise.resolve();
  const say = (r: StopResult, as: StopResult) => {
    shown.set(r, as);
    onProgress(as);
  };
  const procProgress = (r: StopResult) => {
    lines = lines.then(async () => {
      if (final !== undefined) return say(r, creditSupervisor(r, final, sup[0].pid));
      if (supervisorMayHaveEnded(r, await record(), Date.now())) held.push(r);
      else say(r, r);
    });
  };
  // Its own line comes after those it earned.
  const supLines: StopResult[] = [];
  const supStop = stopTargets(sup, { graceMs: graceMs + SUPERVISOR_EXTRA_MS, onProgress: (r) => supLines.push(r) }, deps).then(async (b) => {
    const rec = await record();
    lines = lines.then(() => {
      final = rec;
      for (const r of held.splice(0)) say(r, creditSupervisor(r, rec, sup[0].pid));
      for (const r of supLines) onProgress(r);
    });
    await lines;
    return b;
  });
  const [b, a] = await Promise.all([supStop, stopTargets(procs, { graceMs, onProgress: procProgress, onState }, deps)]);
  await lines;
  const stopped = a.stopped.map((r) => shown.get(r) ?? r);
  return { stopped: [...b.stopped, ...stopped], remaining: [...b.remaining, ...a.remaining] };
}

async function stopRun(
  o: TeardownOptions, v: RunView, first: StopTarget[], onProgress: (r: StopResult) => void, onState?: (s: StopSnapshot) => void,
): Promise<{ stopped: StopResult[]; remaining: Survivor[] }> {
  const stopped: StopResult[] = [];
  const remaining = new Map<number, Survivor>();
  const unrecorded = new Set(v.marked ?? []);
  const marker = markerFor(o.stateDir, v.record.id);
  // A recorded leader looked at again (its environment was not readable yet: notYetNote) keeps its name.
  const later = (pid: number) => {
    const t = unrecordedTarget(pid, { marker, as: pid === v.record.supervisor.pid ? 'supervisor' : 'engine' });
    const name = v.record.processes.find((p) => p.pid === pid)?.name;
    return t && name ? { ...t, name } : t;
  };
  let targets = [...first, ...[...unrecorded].map(later).filter((t): t is StopTarget => t !== null)];
  // Recorded pids that proved not to be the run's (no marker): never signalled, nor what lives under them.
  const strangers = new Set<number>();
  const noted = (r: StopResult) => (unrecorded.has(r.pid) && r.note === undefined ? { ...r, note: MARKED_NOTE } : r);
  const protectedPids = new Set([process.pid, ...ancestors(process.pid)]);
  // Stryker disable next-line EqualityOperator: equivalent, the loop always ends by round 2 (nothing left, or the round === 2 break)
  for (let round = 0; round < 3; round++) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, a stop of no targets signals and reports nothing
    if (targets.length > 0) {
      const res = round === 0
        ? await firstRound(targets, o.graceMs, (r) => onProgress(noted(r)), onState, o.stopDeps, () => readRun(o.stateDir, v.record.id).catch(() => null))
        : await stopTargets(targets, { graceMs: o.graceMs, onProgress: (r) => onProgress(noted(r)) }, o.stopDeps);
      stopped.push(...res.stopped.map(noted));
      for (const s of res.remaining) remaining.set(s.pid, s);
      for (const r of res.stopped) for (const pid of leftAlone(r.note)) strangers.add(pid);
    }
    const rs = await scanRuns(o.stateDir, [v.record]);
    const now = livenessIn(o.stateDir, v.record, rs);
    const foreign = new Set([...strangers].flatMap((pid) => [pid, ...membersOf(rs.scan, pid), ...descendantsIn(rs.scan, pid).map((d) => d.pid)]));
    const alive = now.pids.filter((pid) => !remaining.has(pid) && !foreign.has(pid));
    // Ourselves or the shell that runs us, carrying the run's marker: never signalled, never hidden.
    for (const pid of alive.filter((p) => protectedPids.has(p))) remaining.set(pid, { name: orphanName(readCmdline(pid)), pid, cmd: readCmdline(pid) });
    const left = alive.filter((pid) => !protectedPids.has(pid));
    if (left.length === 0) break;
    if (round === 2) {
      // Never signalled in a fourth round: not a survivor of SIGKILL, and not recorded as one.
      for (const pid of left) remaining.set(pid, { name: orphanName(readCmdline(pid)), pid, cmd: readCmdline(pid) });
      break;
    }
    for (const pid of now.marked) unrecorded.add(pid);
    targets = left.map(later).filter((t): t is StopTarget => t !== null);
  }
  return { stopped, remaining: [...remaining.values()] };
}

export async function teardown(o: TeardownOptions): Promise<TeardownOutcome> {
  const views = o.runId ? [await findRunView(o.stateDir, o.runId)].filter((v): v is RunView => v !== null) : (await listRunViews(o.stateDir)).filter((v) => v.live);
  const live = views.filter((v) => v.live);
  const notRunning = views.filter((v) => !v.live);
  // A record that cannot be read hides no run from teardown: what carries its marker is stopped.
  const unreadable = o.runId ? [] : await unreadableRuns(o.stateDir);
  o.onPlan?.({ runs: live, notRunning, unreadable });

  const stopped: TeardownResult[] = [];
  const remaining: (Survivor & { run: string | null })[] = [];
  const warnings: string[] = [];
  // Every run at once (each run's processes at once too): a slow one never delays the others.
  const perRun = await Promise.all(live.map(async (v) => {
    const run = v.record.id;
    // Stryker disable next-line OptionalChaining,UnaryOperator: equivalent, the record schema requires a supervisor, and pid 1 is never a run's (signallable)
    const supAlive = v.pids.includes(v.record.supervisor?.pid ?? -1);
    if (supAlive) writeStopRequest(o.stateDir, run, { pid: process.pid, command: 'dynamo-dev teardown' });
    const res = await stopRun(o, v, runTargets(v, supAlive, markerFor(o.stateDir, run)), (r) => o.onProgress?.({ ...r, run }), (snap) => o.onState?.(run, snap));
    // Re-read: the supervisor may have written exit codes meanwhile; our marks go on top.
    const rec = await readRun(o.stateDir, run).catch(() => v.record);
    try {
      await writeRun(o.stateDir, markStopped(rec, res.stopped, res.remaining.length === 0, new Date(), res.remaining));
    } catch (err) {
      // A read-only or full disk: the processes are stopped all the same, and that is what the
      // user must hear (with the summary), not an error that hides it.
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      warnings.push(`run ${run}: the record could not be updated (${code}); status may not show the run as stopped`);
    }
    return { run, res };
  }));
  for (const { run, res } of perRun) {
    stopped.push(...res.stopped.map((r) => ({ ...r, run })));
    remaining.push(...res.remaining.map((s) => ({ ...s, run })));
  }
  for (const u of unreadable) {
    const protectedPids = new Set([process.pid, ...ancestors(process.pid)]);
    const targets = u.pids.filter((pid) => !protectedPids.has(pid)).map((pid) => unrecordedTarget(pid)).filter((t): t is StopTarget => t !== null);
    const run = u.id;
    const res = await stopTargets(targets, { graceMs: o.graceMs, onProgress: (r) => o.onProgress?.({ ...r, note: MARKED_NOTE, run }) }, o.stopDeps);
    stopped.push(...res.stopped.map((r) => ({ ...r, note: MARKED_NOTE, run })));
    remaining.push(...res.remaining.map((s) => ({ ...s, run })));
    // Looked at again: "nothing remains" only of a fresh look.
    const left = (await unreadableRuns(o.stateDir)).find((x) => x.id === u.id)?.pids.filter((pid) => !res.remaining.some((s) => s.pid === pid)) ?? [];
    for (const pid of left) remaining.push({ name: orphanName(readCmdline(pid)), pid, cmd: readCmdline(pid), run });
    warnings.push(unreadableLine(u, true));
  }

  let orphanCount = 0;
  const otherRuns: NonNullable<TeardownOutcome['otherRuns']> = [];
  if (o.orphans) {
    const [{ listProcesses }, { classifyEngineCmd }] = await Promise.all([import('../host/procs/processes.js'), import('../host/procs/engine-procs.js')]);
    const [procs, stillLive] = await Promise.all([(o.listProcesses ?? listProcesses)(), listRunViews(o.stateDir)]);
    let found = selectOrphans(procs, {
      uid: typeof process.getuid === 'function' ? process.getuid() : null,
      protectedPids: [process.pid, ...ancestors(process.pid)],
      // Stryker disable next-line MethodExpression: equivalent, a run with any live pid is live, so the others add no pids
      runPids: stillLive.filter((v) => v.live).flatMap((v) => v.pids),
      classify: classifyEngineCmd,
    });
    // Never someone's live experiment started with another state dir (its run marker says which).
    if (found.length > 0) {
      const { otherLiveRuns } = await import('./other-runs.js');
      const owned = await otherLiveRuns(o.stateDir, found.map((p) => p.pid));
      for (const p of found) {
        const other = owned.get(p.pid);
        if (other) otherRuns.push({ ...other, name: orphanName(p.cmd) });
      }
      found = found.filter((p) => !owned.has(p.pid));
    }
    orphanCount = found.length;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, a stop of no targets signals and reports nothing
    if (found.length > 0) {
      // One by one, never by group: a leftover's group may be a shell job that is not ours to end.
      const list: StopTarget[] = found.map((p) => ({ name: orphanName(p.cmd), pid: p.pid, pgid: p.pgid ?? p.pid, startTicks: p.startTicks, single: true }));
      const res = await stopTargets(list, { graceMs: o.graceMs, onProgress: (r) => o.onProgress?.({ ...r, run: null }) }, o.stopDeps);
      for (const r of res.stopped) stopped.push({ ...r, run: null });
      for (const s of res.remaining) remaining.push({ ...s, run: null });
    }
  }
  return { stopped, remaining, runs: live.map((v) => v.record.id), notRunning: notRunning.map((v) => v.record.id), orphans: orphanCount, warnings, ...(unreadable.length ? { unreadable } : {}), ...(o.orphans ? { otherRuns } : {}) };
}
