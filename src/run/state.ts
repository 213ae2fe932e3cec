import { link, mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UserError } from '../errors.js';
import type { RunView } from '../doctor/types.js';
import { runLiveness } from './liveness.js';
import { runDir, runJsonPath, runsDir, upLockPath } from './paths.js';
import { readStartTicks, scanProc } from './proc.js';
import { checkStateDir, prepareStateDir } from './state-dir.js';
import type { RunRecord, RunStatus } from './types.js';

// run.json is the single source of truth for status and teardown: written atomically (tmp +
// rename) so a reader never sees half a document, even when the writer is SIGKILLed mid-write.

let tmpCounter = 0;
const tmpName = (path: string) => `${path}.${process.pid}.${++tmpCounter}.tmp`;

async function writeAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tmpName(path);
  await writeFile(tmp, text);
  await rename(tmp, path);
}

function checkRunId(id: string): void {
  if (!id || id.includes('/') || id.includes('\\') || id === '.' || id === '..') {
    throw new UserError(`--run: "${id}" is not a run id (ids look like 20261130-101500-agg)`, 'dynamo-dev status --all');
  }
}

export async function writeRun(stateDir: string, rec: RunRecord): Promise<void> {
  checkRunId(rec.id);
  await writeAtomic(runJsonPath(stateDir, rec.id), `${JSON.stringify(rec, null, 2)}\n`);
}

async function tryReadRun(stateDir: string, id: string): Promise<RunRecord | null> {
  try {
    const rec = JSON.parse(await readFile(runJsonPath(stateDir, id), 'utf8')) as RunRecord;
    if (!rec || typeof rec !== 'object' || !Array.isArray(rec.processes)) return null;
    return { ...rec, id: rec.id || id };
  } catch {
    return null;
  }
}

/** Pure: newest first (createdAt, then id, which sorts by time too). */
export function sortRuns(runs: RunRecord[]): RunRecord[] {
  return [...runs].sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? '') || b.id.localeCompare(a.id));
}

export async function listRuns(stateDir: string): Promise<RunRecord[]> {
  if (!(await checkStateDir(stateDir))) return [];
  let ids: string[];
  try {
    ids = await readdir(runsDir(stateDir));
  } catch {
    return [];
  }
  const recs = await Promise.all(ids.map((id) => tryReadRun(stateDir, id)));
  return sortRuns(recs.filter((r): r is RunRecord => r !== null));
}

export async function readRun(stateDir: string, id: string): Promise<RunRecord> {
  checkRunId(id);
  await checkStateDir(stateDir);
  const rec = await tryReadRun(stateDir, id);
  if (rec) return rec;
  const recent = (await listRuns(stateDir)).slice(0, 5).map((r) => r.id);
  throw new UserError(
    recent.length > 0
      ? `--run: no run "${id}" in ${stateDir}; recent runs: ${recent.join(', ')}`
      : `--run: no run "${id}": no runs are recorded in ${stateDir}`,
    recent.length > 0 ? 'dynamo-dev status --all' : 'dynamo-dev up [RECIPE]',
  );
}

/** Pure: status of a record given what is alive. supervisor dead + processes alive -> 'orphaned'. */
export function runStatus(rec: RunRecord, alive: { supervisor: boolean; processes: boolean }): RunStatus {
  const s = rec.state;
  if (alive.supervisor) {
    // The supervisor keeps the record current; `stopping` is on its way to stopped.
    return s === 'stopping' ? 'stopped' : s;
  }
  if (alive.processes) {
    // `up --detach` exits once ready: its processes living on without it is the expected state.
    if (rec.supervisor?.detached && s === 'ready') return 'ready';
    return 'orphaned';
  }
  if (s === 'stopped' || s === 'stopping') return 'stopped';
  if (s === 'failed') return 'failed';
  // Recorded as starting/ready, yet nothing lives and no supervisor noted why: it died.
  return 'failed';
}

/** Every recorded run with its status and live pids, from one scan of /proc. */
export async function listRunViews(stateDir: string): Promise<RunView[]> {
  const runs = await listRuns(stateDir);
  const scan = scanProc();
  return runs.map((rec) => viewOf(stateDir, rec, scan));
}

function viewOf(stateDir: string, rec: RunRecord, scan: ReturnType<typeof scanProc>): RunView {
  const l = runLiveness(rec, scan);
  return {
    record: rec,
    status: runStatus(rec, { supervisor: l.supervisor, processes: l.processes }),
    live: l.supervisor || l.processes,
    pids: l.pids,
    logsDir: join(runDir(stateDir, rec.id), 'logs'),
  };
}

/** id given: that run; else the live run if any, else the latest; null when none recorded. */
export async function findRunView(stateDir: string, id?: string): Promise<RunView | null> {
  if (id) return viewOf(stateDir, await readRun(stateDir, id), scanProc());
  const views = await listRunViews(stateDir);
  return views.find((v) => v.live) ?? views[0] ?? null;
}

// ---- the up lock ----

export interface LockOwner {
  pid: number;
  startTicks: number | null;
  runId: string;
  createdAt?: string;
}

/** Pure: parse a lock file; null when unreadable (a crash mid-write never happens: it is linked whole). */
export function parseLock(text: string): LockOwner | null {
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (typeof o.pid !== 'number' || !Number.isInteger(o.pid) || o.pid <= 0) return null;
    return { pid: o.pid, startTicks: typeof o.startTicks === 'number' ? o.startTicks : null, runId: String(o.runId ?? '?'), createdAt: o.createdAt };
  } catch {
    return null;
  }
}

/**
 * Pure takeover rule: a lock is held only while its owner is alive and is the same process (start
 * ticks; without recorded ticks, any live process with that pid counts, to stay on the safe side).
 * Unparseable or owner gone -> stale, taken over.
 */
export function judgeLock(owner: LockOwner | null, startTicksOf: (pid: number) => number | null): 'held' | 'stale' {
  if (!owner) return 'stale';
  const now = startTicksOf(owner.pid);
  if (now === null) return 'stale';
  if (owner.startTicks === null) return 'held';
  return now === owner.startTicks ? 'held' : 'stale';
}

/** One `up` per state directory: lock file with owner pid (+ start ticks) and run id; a stale lock (owner gone)
 *  is taken over; a live one -> UserError "another up is running: run <id> (pid N)". */
export async function acquireUpLock(stateDir: string, runId: string): Promise<{ release(): Promise<void> }> {
  const path = upLockPath(stateDir);
  await prepareStateDir(stateDir);
  const me: LockOwner = { pid: process.pid, startTicks: readStartTicks(process.pid), runId, createdAt: new Date().toISOString() };
  const mine = JSON.stringify(me);
  // Written whole to a private file, then hard-linked: link() fails if the lock exists, so the
  // lock appears atomically with its content and two racing `up`s cannot both create it.
  const tmp = tmpName(path);
  await writeFile(tmp, mine);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(tmp, path);
        return {
          async release() {
            const cur = await readFile(path, 'utf8').catch(() => null);
            if (cur === mine) await unlink(path).catch(() => undefined);
          },
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const text = await readFile(path, 'utf8').catch(() => null);
      if (text === null) continue; // released between link and read: try again
      const owner = parseLock(text);
      if (judgeLock(owner, readStartTicks) === 'held') {
        throw new UserError(
          `another up is running: run ${owner!.runId} (pid ${owner!.pid}); one up per state directory`,
          `dynamo-dev teardown --run ${owner!.runId}   (or use another --state-dir)`,
        );
      }
      // Stale: the owner is gone. Remove only if it is still the same stale content.
      const again = await readFile(path, 'utf8').catch(() => null);
      if (again === text) await unlink(path).catch(() => undefined);
    }
    throw new Error(`could not take the lock ${path}: it keeps changing (another up starting at the same moment?)`);
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}
