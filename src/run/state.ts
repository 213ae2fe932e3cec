import { link, mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UserError } from '../errors.js';
import type { RunView } from '../doctor/types.js';
import { runLiveness } from './liveness.js';
import { liveDir, liveMarkerPath, runDir, runJsonPath, runsDir, upLockPath } from './paths.js';
import { readStartTicks, scanFor, type ProcStat } from './proc.js';
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
  // Listed in the live index before the record exists, so no reader can see a live run unlisted.
  if (rec.state !== 'stopped' && rec.state !== 'failed') await markLive(stateDir, rec.id);
  await writeAtomic(runJsonPath(stateDir, rec.id), `${JSON.stringify(rec, null, 2)}\n`);
}

// ---- the live index ----
// status must show every live run, however old, and the recent ones; reading every record of a
// state directory with months of runs to find the live ones would cost status (and doctor, up)
// time in proportion to the history. So each run that may have live processes has an empty file
// live/<id>: written with the record's first non-final state (before the record), removed only by
// a reader that has just found nothing of the run alive (a dead run cannot come back to life).
// A state directory written before the index existed has no live/ folder: then every record is
// read, as before, and the index is built from what is found alive.

const marked = new Set<string>();

/** `recheck`: write even if this process wrote it before (a reader found it missing). */
async function markLive(stateDir: string, id: string, recheck = false): Promise<void> {
  const key = `${stateDir}\0${id}`;
  if (marked.has(key) && !recheck) return;
  await mkdir(liveDir(stateDir), { recursive: true, mode: 0o700 });
  await writeFile(liveMarkerPath(stateDir, id), '', { flag: 'a' });
  marked.add(key);
}

/** Ids the live index lists; null when this state directory has no index yet. */
async function liveIds(stateDir: string): Promise<string[] | null> {
  try {
    return await readdir(liveDir(stateDir));
  } catch {
    return null;
  }
}

/**
 * Brings the index in line with what a reader has just judged: dead runs leave it, live ones join
 * it; a state directory with runs but no index gets one (from then on, not every record is read).
 */
async function syncLiveIndex(
  stateDir: string, views: readonly { id: string; live: boolean }[], indexed: ReadonlySet<string> | null, hasRuns: boolean,
): Promise<void> {
  if (indexed === null && hasRuns) await mkdir(liveDir(stateDir), { recursive: true, mode: 0o700 }).catch(() => undefined);
  await Promise.all(views.map(async ({ id, live }) => {
    try {
      if (live && !indexed?.has(id)) await markLive(stateDir, id, true);
      if (!live && indexed?.has(id)) {
        marked.delete(`${stateDir}\0${id}`);
        await unlink(liveMarkerPath(stateDir, id));
      }
    } catch {
      // a read-only or foreign state directory: the index stays as it is, and so does correctness
    }
  }));
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

/** Every run id in the state directory, newest first (ids start with their creation time). */
async function runIds(stateDir: string): Promise<string[]> {
  try {
    return (await readdir(runsDir(stateDir))).sort().reverse();
  } catch {
    return [];
  }
}

export async function listRuns(stateDir: string): Promise<RunRecord[]> {
  if (!(await checkStateDir(stateDir))) return [];
  const ids = await runIds(stateDir);
  const recs = await Promise.all(ids.map((id) => tryReadRun(stateDir, id)));
  return sortRuns(recs.filter((r): r is RunRecord => r !== null));
}

/** The pids and groups of records, for scanFor. */
function recordedIds(recs: readonly RunRecord[]): { pids: number[]; groups: number[] } {
  const pids: number[] = [];
  const groups: number[] = [];
  for (const rec of recs) {
    if (rec.supervisor?.pid) pids.push(rec.supervisor.pid);
    for (const p of rec.processes) {
      if (p.pid !== null) {
        pids.push(p.pid);
        groups.push(p.pgid ?? p.pid);
      }
      for (const d of p.descendants ?? []) pids.push(d.pid);
    }
  }
  return { pids, groups };
}

/** One scan that judges every one of these records (see scanFor). */
export function scanForRuns(recs: readonly RunRecord[]): Promise<ProcStat[]> {
  const { pids, groups } = recordedIds(recs);
  return scanFor(pids, groups);
}

export interface RunsAndScan {
  /** Sorted like listRuns. */
  recs: RunRecord[];
  /** One scan that judges every record (scanFor). */
  scan: ProcStat[];
  /** Tells the live index which of these runs were found live on that scan. */
  settle(judged: readonly { id: string; live: boolean }[]): Promise<void>;
}

/**
 * Run records with one scan to judge them. `recent` given: only what a listing of live and recent
 * runs needs, whatever the history holds: every run the live index lists, and the `recent` newest
 * readable ones (newest first by id, stopping there). Without it: every record.
 */
export async function loadRuns(stateDir: string, o: { recent?: number } = {}): Promise<RunsAndScan> {
  if (!(await checkStateDir(stateDir))) return { recs: [], scan: [], settle: async () => undefined };
  const [ids, live] = await Promise.all([runIds(stateDir), liveIds(stateDir)]);
  const indexed = live === null ? null : new Set(live);
  let recs: RunRecord[];
  if (o.recent === undefined || indexed === null) {
    recs = await listRuns(stateDir);
  } else {
    const byId = new Map<string, RunRecord>();
    await Promise.all(ids.filter((id) => indexed.has(id)).map(async (id) => {
      const rec = await tryReadRun(stateDir, id);
      if (rec) byId.set(id, rec);
    }));
    let newest = 0;
    for (let i = 0; i < ids.length && newest < o.recent; i++) {
      const rec = byId.get(ids[i]) ?? (await tryReadRun(stateDir, ids[i]));
      if (!rec) continue; // unreadable: skipped, as listRuns skips it
      byId.set(ids[i], rec);
      newest++;
    }
    recs = sortRuns([...byId.values()]);
  }
  const scan = await scanForRuns(recs);
  return { recs, scan, settle: (judged) => syncLiveIndex(stateDir, judged, indexed, ids.length > 0) };
}

/** Live runs and the `recent` newest (status without --all), each with its liveness from one scan. */
export async function liveAndRecentViews(stateDir: string, recent: number): Promise<RunView[]> {
  const { recs, scan, settle } = await loadRuns(stateDir, { recent });
  const views = recs.map((rec) => viewOf(stateDir, rec, scan));
  await settle(views.map((v) => ({ id: v.record.id, live: v.live })));
  return views;
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
  const { recs, scan, settle } = await loadRuns(stateDir);
  const views = recs.map((rec) => viewOf(stateDir, rec, scan));
  await settle(views.map((v) => ({ id: v.record.id, live: v.live })));
  return views;
}

export function viewOf(stateDir: string, rec: RunRecord, scan: readonly ProcStat[]): RunView {
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
  if (id) {
    const rec = await readRun(stateDir, id);
    return viewOf(stateDir, rec, await scanForRuns([rec]));
  }
  // The live run is in the live index; the latest is the newest readable record.
  const views = await liveAndRecentViews(stateDir, 1);
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
