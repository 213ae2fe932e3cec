import { join } from 'node:path';
import type { RunLiveness } from './liveness.js';
import { lostProcesses, type LostProcess } from './losses.js';
import { runDir } from './paths.js';
import { scanRuns } from './run-scan.js';
import { foreignProcWarning, readCmdline, readPidNamespace } from './proc.js';
import { beingStopped, judgeRun, loadRuns, readRun, runStatus, stopOrphaned } from './state.js';
import type { EndDiagnosis, ProcessState, RestartEntry, RunRecord, RunStatus } from './types.js';
import type { RestartPolicy } from './types.js';

// The `status --json` document, built purely from records and liveness; the human table renders it.

export interface ProcessStatus {
  name: string;
  role: string;
  pid: number | null;
  /** The recorded pid is alive and is still the process we started. */
  alive: boolean;
  /** Alive, past its readiness checks, and its run's stop has not begun (the table's READY). */
  ready: boolean;
  state: ProcessState;
  kvTokens: number | null;
  ports: Record<string, number>;
  uptimeMs: number | null;
  startedAt: string | null;
  exitCode: number | null;
  signal: string | null;
  log: string;
  /** Live pids of this process (leader, group members, engine descendants). */
  pids: number[];
  /** When it ended (its supervisor saw it); null while it runs or when unknown. */
  endedAt: string | null;
  /** When a command found it gone with nothing watching (exit unknown). */
  noticedGoneAt: string | null;
  /** Its log's diagnosis when it ended. */
  diagnosis: EndDiagnosis | null;
  /** Times it was started again (`dynamo-dev restart` or `up --restart`). */
  restarts?: number;
  /** Each restart, oldest first: when, by whom (on-failure: `up --restart`; command), how it had ended, its outcome. */
  restartHistory?: RestartEntry[];
  /** Why `up --restart` does not start it again (the limit reached, a restart that did not come back); null otherwise. */
  restartsEnded?: { at: string; reason: string } | null;
  /** `up --restart` waits before starting it again (a crash loop's back-off). */
  restartBackoff?: { delayMs: number; at: string; upMs: number } | null;
}

/** A lost process with the GPU memory what is left of it holds (nvidia-smi; null: not listed or unknown). */
export interface LostStatus extends LostProcess {
  gpuMiB: number | null;
}

export interface RunStatusDoc {
  id: string;
  /** `up --name`: the name commands take as --run; null for an unnamed run. */
  name?: string | null;
  recipe: string;
  model: string;
  state: RunStatus;
  live: boolean;
  createdAt: string;
  updatedAt: string;
  frontendUrl: string;
  detached: boolean;
  supervisor: { pid: number; alive: boolean };
  logsDir: string;
  /**
   * The interpreter the run's processes ran, and where it came from (plan.python; runs recorded
   * before it: the first process's argv[0], source null).
   */
  python?: { interpreter: string; source: 'given' | 'recipe' | 'managed' | null; managedDir: string | null } | null;
  processes: ProcessStatus[];
  /** `up --restart on-failure[:N]` (max null: no limit); null: started without it. */
  restartPolicy?: RestartPolicy | null;
  /** Live processes of the run that no record names, found by the run marker in their environment
   *  (a helper that double-forked out of its group, a spawn a SIGKILLed `up` never recorded). */
  unrecorded: { pid: number; cmd: string }[];
  /** What a live run has lost (state `degraded`): which process, how it ended, when, what of it is left. */
  lost: LostStatus[];
  /** Whether the GPU memory of what is left was asked of nvidia-smi (false: not asked, or it failed). */
  gpuChecked: boolean;
  /**
   * Its live supervisor is stopping it and some of its processes still run (they hold ports and GPU
   * memory): `state` says `stopped`, CLI.md's word for where it is going, and this says it is not
   * there yet; null otherwise. `killAt`: when what ignores SIGTERM is SIGKILLed (null: unknown).
   */
  stopping?: { supervisorPid: number; killAt: string | null; running: string[] } | null;
  /**
   * Its supervisor died while stopping it (state `orphaned`; the record still says `stopping`):
   * the processes of which something still runs, though their stop began; nothing stops them now
   * (`teardown --run` does). null otherwise.
   */
  orphanedStop?: { supervisorPid: number; running: string[] } | null;
  /**
   * What a stop of the run (its supervisor's or teardown's) could not end, still alive: it outlived
   * SIGKILL. `state`: its letter in /proc/PID/stat now (D: uninterruptible, stuck in the kernel);
   * `at`: when that stop gave up on it; `name`: the run's process it belongs to. Empty otherwise.
   */
  survivors?: { name: string; pid: number; cmd: string; state: string; at: string }[];
  /**
   * Its supervisor ran in another pid namespace than this command (a container sharing the state
   * dir): its pid is that namespace's and cannot be seen from here, so the run is not called
   * orphaned for it; `state` is then as recorded. Absent otherwise.
   */
  pidNamespace?: { run: string; here: string };
}

/** Pure: the namespaces when the run's supervisor was recorded in another pid namespace than `here`. */
export function otherPidNamespace(rec: RunRecord, here: string | null): { run: string; here: string } | null {
  const run = rec.supervisor?.pidNamespace;
  return typeof run === 'string' && here !== null && run !== here ? { run, here } : null;
}

/** Pure: `orphaned` only judged from a supervisor this namespace can see; else the recorded state. */
function asJudged(s: RunStatus, rec: RunRecord, otherNs: boolean): RunStatus {
  if (!otherNs || s !== 'orphaned') return s;
  return rec.state === 'stopping' ? 'stopped' : rec.state;
}

/** Pure: the one warning line for such a run. */
export function pidNamespaceWarning(d: RunStatusDoc): string | null {
  if (!d.pidNamespace) return null;
  return `run ${d.id} was supervised in another pid namespace (${d.pidNamespace.run}; this command runs in ${d.pidNamespace.here}): ` +
    `its supervisor (pid ${d.supervisor.pid} there) cannot be seen from here, so its state is shown as recorded (${d.state}), not judged; run dynamo-dev status where it was started`;
}

/**
 * Pure: the run's stop has begun (its supervisor recorded `stopping` before its first SIGTERM) or
 * ended: none of its processes is ready any more, whatever its own record last said: each had
 * SIGTERM, or a stop it survived (orphaned stop, survivor of SIGKILL).
 */
export function stopBegan(rec: Pick<RunRecord, 'state'>): boolean {
  return rec.state === 'stopping' || rec.state === 'stopped' || rec.state === 'failed';
}

export function buildRunStatus(rec: RunRecord, l: RunLiveness, stateDir: string, now: number, cmdOf: (pid: number) => string = () => '', pidNamespaceHere: string | null = null): RunStatusDoc {
  const otherNs = otherPidNamespace(rec, pidNamespaceHere);
  const ending = stopBegan(rec);
  const processes = rec.processes.map((p, i): ProcessStatus => {
    const pl = l.perProcess[i];
    const started = p.startedAt ? Date.parse(p.startedAt) : NaN;
    return {
      name: p.name,
      role: p.role,
      pid: p.pid,
      alive: pl.alive,
      ready: pl.alive && p.state === 'ready' && !ending,
      state: p.state,
      kvTokens: p.kvTokens,
      ports: p.ports ?? {},
      uptimeMs: pl.alive && Number.isFinite(started) ? Math.max(0, now - started) : null,
      startedAt: p.startedAt,
      exitCode: p.exitCode,
      signal: p.signal,
      log: p.log,
      pids: pl.pids,
      endedAt: p.endedAt ?? null,
      noticedGoneAt: p.noticedGoneAt ?? null,
      diagnosis: p.diagnosis ?? null,
      restarts: p.restarts ?? 0,
      restartHistory: p.restartHistory ?? [],
      restartsEnded: p.restartsEnded ?? null,
      restartBackoff: p.restartBackoff ?? null,
    };
  });
  const live = l.supervisor || l.processes;
  const lost = live ? lostProcesses(rec, l) : [];
  return {
    id: rec.id,
    name: rec.name ?? null,
    recipe: rec.recipe,
    model: rec.model,
    state: asJudged(runStatus(rec, { supervisor: l.supervisor, processes: l.processes, lost: lost.length }), rec, otherNs !== null),
    live,
    createdAt: rec.createdAt,
    updatedAt: rec.updatedAt,
    frontendUrl: rec.frontendUrl,
    detached: Boolean(rec.supervisor?.detached),
    supervisor: { pid: rec.supervisor?.pid ?? 0, alive: l.supervisor },
    logsDir: join(runDir(stateDir, rec.id), 'logs'),
    python: pythonOf(rec),
    processes,
    restartPolicy: rec.restartPolicy ?? null,
    unrecorded: (l.marked ?? []).map((pid) => ({ pid, cmd: cmdOf(pid) })),
    ...(otherNs ? { pidNamespace: otherNs } : {}),
    lost: lost.map((x) => ({ ...x, gpuMiB: null })),
    gpuChecked: false,
    stopping: beingStopped(rec, l)
      ? { supervisorPid: rec.supervisor?.pid ?? 0, killAt: rec.stopKillAt ?? null, running: processes.filter((p) => p.alive).map((p) => p.name) }
      : null,
    survivors: (l.survivors ?? []).flatMap((live) => (rec.survivors ?? []).filter((x) => x.pid === live.pid).map((x) => ({ name: x.name, pid: x.pid, cmd: x.cmd, state: live.state, at: x.at }))),
    orphanedStop: stopOrphaned(rec, l)
      ? { supervisorPid: rec.supervisor?.pid ?? 0, running: processes.filter((p) => p.pids.length > 0).map((p) => p.name) }
      : null,
  };
}

/** How many runs that are not live `status` shows by default. */
export const RECENT_RUNS = 5;

/** Pure: the docs with the GPU memory nvidia-smi lists for what is left of lost processes. */
export function withLeftoverMemory(docs: RunStatusDoc[], usedMiB: ReadonlyMap<number, number | null>): RunStatusDoc[] {
  return docs.map((d) => (d.lost.some((x) => x.leftPids.length > 0)
    ? {
        ...d,
        gpuChecked: true,
        lost: d.lost.map((x) => {
          const listed = x.leftPids.filter((pid) => usedMiB.has(pid));
          return { ...x, gpuMiB: listed.length > 0 ? listed.reduce((sum, pid) => sum + (usedMiB.get(pid) ?? 0), 0) : null };
        }),
      }
    : d));
}

/** Pure: which runs `status` shows: --run: that one; --all: all; else every live run and the recent ones. */
export function pickRuns(docs: RunStatusDoc[], o: { all?: boolean; recent?: number }): RunStatusDoc[] {
  if (o.all) return docs;
  const recent = o.recent ?? RECENT_RUNS;
  return docs.filter((d, i) => d.live || i < recent);
}

/** The runs `status` shows, reading only their records (not the whole history) and judging them on one scan. */
export async function collectStatus(stateDir: string, o: { runId?: string; all?: boolean; env?: NodeJS.ProcessEnv }): Promise<RunStatusDoc[]> {
  const now = Date.now();
  const judge = async (r: RunRecord, scan: Parameters<typeof judgeRun>[2]) => {
    const j = await judgeRun(stateDir, r, scan);
    // Where /proc itself is another namespace's, that is said once (proc-warning.ts) and this comparison means nothing.
    return buildRunStatus(j.record, j.liveness, stateDir, now, readCmdline, foreignProcWarning() === null ? readPidNamespace('self') : null);
  };
  let shown: RunStatusDoc[];
  if (o.runId) {
    const rec = await readRun(stateDir, o.runId);
    shown = [await judge(rec, await scanRuns(stateDir, [rec]))];
  } else {
    const { recs, rs, settle } = await loadRuns(stateDir, o.all ? {} : { recent: RECENT_RUNS });
    const docs = await Promise.all(recs.map((r) => judge(r, rs)));
    await settle(docs.map((d) => ({ id: d.id, live: d.live })));
    shown = pickRuns(docs, o);
  }
  // Only when something of a lost process still lives is nvidia-smi asked (it costs ~100 ms).
  if (!shown.some((d) => d.lost.some((x) => x.leftPids.length > 0))) return shown;
  const { probeComputeApps } = await import('../host/gpu/nvidia-smi.js');
  // Stryker disable next-line ArrowFunction: equivalent, undefined and null both fail the ok test below (and probeComputeApps reports failures as ok: false)
  const apps = await probeComputeApps(o.env ?? process.env, 3000).catch(() => null);
  if (!apps?.ok) return shown;
  return withLeftoverMemory(shown, new Map(apps.apps.map((a) => [a.pid, a.usedMiB])));
}

/** Which interpreter a run used: its plan says, else the first command line's program. */
function pythonOf(rec: RunRecord): RunStatusDoc['python'] {
  const py = (rec.plan as { python?: { interpreter?: unknown; source?: unknown; managed?: { dir?: unknown } | null } } | undefined)?.python;
  if (py && typeof py.interpreter === 'string') {
    const source = py.source === 'given' || py.source === 'recipe' || py.source === 'managed' ? py.source : null;
    return { interpreter: py.interpreter, source, managedDir: typeof py.managed?.dir === 'string' ? py.managed.dir : null };
  }
  const first = rec.processes[0]?.argv?.[0];
  return typeof first === 'string' ? { interpreter: first, source: null, managedDir: null } : null;
}
