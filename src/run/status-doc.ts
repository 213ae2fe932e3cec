import { join } from 'node:path';
import type { RunLiveness } from './liveness.js';
import { runDir } from './paths.js';
import { livenessIn, scanRuns } from './run-scan.js';
import { readCmdline } from './proc.js';
import { loadRuns, readRun, runStatus } from './state.js';
import type { ProcessState, RunRecord, RunStatus } from './types.js';

// The `status --json` document, built purely from records and liveness; the human table renders it.

export interface ProcessStatus {
  name: string;
  role: string;
  pid: number | null;
  /** The recorded pid is alive and is still the process we started. */
  alive: boolean;
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
}

export interface RunStatusDoc {
  id: string;
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
  processes: ProcessStatus[];
  /** Live processes of the run that no record names, found by the run marker in their environment
   *  (a helper that double-forked out of its group, a spawn a SIGKILLed `up` never recorded). */
  unrecorded: { pid: number; cmd: string }[];
}

export function buildRunStatus(rec: RunRecord, l: RunLiveness, stateDir: string, now: number, cmdOf: (pid: number) => string = () => ''): RunStatusDoc {
  const processes = rec.processes.map((p, i): ProcessStatus => {
    const pl = l.perProcess[i];
    const started = p.startedAt ? Date.parse(p.startedAt) : NaN;
    return {
      name: p.name,
      role: p.role,
      pid: p.pid,
      alive: pl.alive,
      ready: pl.alive && p.state === 'ready',
      state: p.state,
      kvTokens: p.kvTokens,
      ports: p.ports ?? {},
      uptimeMs: pl.alive && Number.isFinite(started) ? Math.max(0, now - started) : null,
      startedAt: p.startedAt,
      exitCode: p.exitCode,
      signal: p.signal,
      log: p.log,
      pids: pl.pids,
    };
  });
  return {
    id: rec.id,
    recipe: rec.recipe,
    model: rec.model,
    state: runStatus(rec, { supervisor: l.supervisor, processes: l.processes }),
    live: l.supervisor || l.processes,
    createdAt: rec.createdAt,
    updatedAt: rec.updatedAt,
    frontendUrl: rec.frontendUrl,
    detached: Boolean(rec.supervisor?.detached),
    supervisor: { pid: rec.supervisor?.pid ?? 0, alive: l.supervisor },
    logsDir: join(runDir(stateDir, rec.id), 'logs'),
    processes,
    unrecorded: (l.marked ?? []).map((pid) => ({ pid, cmd: cmdOf(pid) })),
  };
}

/** How many runs that are not live `status` shows by default. */
export const RECENT_RUNS = 5;

/** Pure: which runs `status` shows: --run: that one; --all: all; else every live run and the recent ones. */
export function pickRuns(docs: RunStatusDoc[], o: { all?: boolean; recent?: number }): RunStatusDoc[] {
  if (o.all) return docs;
  const recent = o.recent ?? RECENT_RUNS;
  return docs.filter((d, i) => d.live || i < recent);
}

/** The runs `status` shows, reading only their records (not the whole history) and judging them on one scan. */
export async function collectStatus(stateDir: string, o: { runId?: string; all?: boolean }): Promise<RunStatusDoc[]> {
  if (o.runId) {
    const rec = await readRun(stateDir, o.runId);
    return [buildRunStatus(rec, livenessIn(stateDir, rec, await scanRuns(stateDir, [rec])), stateDir, Date.now(), readCmdline)];
  }
  const { recs, rs, settle } = await loadRuns(stateDir, o.all ? {} : { recent: RECENT_RUNS });
  const now = Date.now();
  const docs = recs.map((r) => buildRunStatus(r, livenessIn(stateDir, r, rs), stateDir, now, readCmdline));
  await settle(docs.map((d) => ({ id: d.id, live: d.live })));
  return pickRuns(docs, o);
}
