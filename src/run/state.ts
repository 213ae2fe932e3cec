import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeAtomic } from './atomic-write.js';
import { readBounded } from '../host/files/bounded-read.js';
import { writeWholeFileSync } from '../host/files/exclusive-write.js';
import { asDiskFull, UserError } from '../errors.js';
import type { RunView } from './run-view.js';
import { livenessIn, scanRuns, type RunsScan } from './run-scan.js';
import { supervisorStopping, type RunLiveness } from './liveness.js';
import { lostProcesses, noteGone, type LostProcess } from './losses.js';
import { liveDir, liveMarkerPath, logPath, runDir, runJsonPath, runPathParts, runsDir } from './paths.js';
import { checkStateDir } from './state-dir.js';
import type { RunRecord, RunStatus } from './types.js';

// run.json is the single source of truth for status and teardown: written atomically (atomic-write.ts).

function checkRunId(id: string): void {
  if (!id || id.includes('/') || id.includes('\\') || id === '.' || id === '..') {
    throw new UserError(`--run: "${id}" is not a run id (ids look like 20261130-101500-agg)`, 'dynamo-dev status --all');
  }
}

/** Listed in the live index: not ended, or ended with survivors of its stop (what SIGKILL did not end). */
const listedLive = (rec: RunRecord) => (rec.state !== 'stopped' && rec.state !== 'failed') || (rec.survivors?.length ?? 0) > 0;

export async function writeRun(stateDir: string, rec: RunRecord): Promise<void> {
  checkRunId(rec.id);
  // Listed in the live index before the record exists, so no reader can see a live run unlisted.
  if (listedLive(rec)) await markLive(stateDir, rec.id);
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

/** markLive, synchronously (the supervisor's writes are; see RunWriter). */
function markLiveSync(stateDir: string, id: string): void {
  const key = `${stateDir}\0${id}`;
  if (marked.has(key)) return;
  mkdirSync(liveDir(stateDir), { recursive: true, mode: 0o700 });
  writeFileSync(liveMarkerPath(stateDir, id), '', { flag: 'a' });
  marked.add(key);
}

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
  // Stryker disable next-line BooleanLiteral: equivalent: live/ is missing here and its parent exists, so mkdir needs no recursion (a race that makes it fails into the catch)
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

/** writeRun, synchronously: the supervisor's writes (see RunWriter). */
export function writeRunSync(stateDir: string, rec: RunRecord): void {
  checkRunId(rec.id);
  if (listedLive(rec)) markLiveSync(stateDir, rec.id);
  const path = runJsonPath(stateDir, rec.id);
  mkdirSync(dirname(path), { recursive: true });
  try {
    // Exclusive, unguessable temporary: nothing planted in the state dir is followed or removed.
    writeWholeFileSync(path, `${JSON.stringify(rec, null, 2)}\n`);
  } catch (err) {
    throw asDiskFull(err, path);
  }
}

/** The most a run.json may take (a real one is a few KB; a planted 1 GB file must not be read whole). */
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/** Warned once per file per process: one bad record costs one line, never the other runs. */
const warned = new Set<string>();
let warnSink: (line: string) => void = (line) => void process.stderr.write(`${line}\n`);
/** Tests and callers that collect warnings themselves. */
export function onRecordWarning(sink: (line: string) => void): void {
  warnSink = sink;
}

type ReadResult = { ok: true; record: RunRecord } | { ok: false; reason: string } | null;

/** The record of runs/<id>/ (null: no run.json there, e.g. a run dir whose up never got to write). */
async function readRecord(stateDir: string, id: string): Promise<ReadResult> {
  const path = runJsonPath(stateDir, id);
  // Bounded (host/files/bounded-read.ts): never a FIFO opened blocking, a link followed (ours is
  // written by rename, never a link: one planted to a secret file is not read), a huge file read whole.
  const read = await readBounded(path, { maxBytes: MAX_RECORD_BYTES });
  if (!read.ok) {
    if (read.why === 'absent') return null;
    if (read.why === 'not-a-file') return { ok: false, reason: 'not a regular file' };
    if (read.why === 'link') return { ok: false, reason: 'a symbolic link, which is not followed' };
    if (read.why === 'too-large') return { ok: false, reason: `${Math.round(read.size / (1024 * 1024))} MiB is too large for a run record` };
    return { ok: false, reason: `cannot read it (${read.code})` };
  }
  const text = read.text;
  // The schema (zod, ~45 ms to load) only once there is a record to check: doctor on a machine
  // without runs, and every command before its first run, never pays for it.
  const { parseRunRecord } = await import('./record-schema.js');
  return parseRunRecord(text, id, (name) => logPath(stateDir, id, name));
}

/** Run records this process found unreadable, by path: status and teardown must not say "no run" over them. */
const unreadable = new Map<string, { stateDir: string; id: string; path: string; reason: string }>();

/** The run records of a state dir this process could not read so far (listRuns and loadRuns fill it). */
export function unreadableRecords(stateDir: string): { id: string; path: string; reason: string }[] {
  return [...unreadable.values()].filter((u) => u.stateDir === stateDir).map(({ id, path, reason }) => ({ id, path, reason }));
}

async function tryReadRun(stateDir: string, id: string): Promise<RunRecord | null> {
  const r = await readRecord(stateDir, id);
  if (r === null) return null;
  if (r.ok) return r.record;
  const path = runJsonPath(stateDir, id);
  unreadable.set(path, { stateDir, id, path, reason: r.reason });
  if (!warned.has(path)) {
    warned.add(path);
    warnSink(`dynamo-dev: warning: ${path}: skipped, not a valid run record: ${r.reason}`);
  }
  return null;
}

/**
 * The record of runs/<id> of a state dir this command was not pointed at (one a process's run
 * marker names): null when missing, invalid, or in a state dir that may not be trusted. Silent:
 * the caller judges what it cannot read (another user's or a broken state dir is not ours to warn about).
 */
export async function readTrustedRecord(stateDir: string, id: string): Promise<RunRecord | null> {
  try {
    checkRunId(id);
    if (!(await checkStateDir(stateDir))) return null;
  } catch {
    return null;
  }
  const r = await readRecord(stateDir, id);
  return r?.ok ? r.record : null;
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

export interface RunsAndScan {
  /** Sorted like listRuns. */
  recs: RunRecord[];
  /** One look at /proc that judges every record (scanRuns: scanFor, boot id, run markers). */
  rs: RunsScan;
  /** Tells the live index which of these runs were found live on that scan. */
  settle(judged: readonly { id: string; live: boolean }[]): Promise<void>;
}

/**
 * Run records with one scan to judge them. `recent` given: only what a listing of live and recent
 * runs needs, whatever the history holds: every run the live index lists, and the `recent` newest
 * readable ones (newest first by id, stopping there). Without it: every record.
 */
export async function loadRuns(stateDir: string, o: { recent?: number } = {}): Promise<RunsAndScan> {
  if (!(await checkStateDir(stateDir))) return { recs: [], rs: await scanRuns(stateDir, []), settle: async () => undefined };
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
  const rs = await scanRuns(stateDir, recs);
  return { recs, rs, settle: (judged) => syncLiveIndex(stateDir, judged, indexed, ids.length > 0) };
}

/** Live runs and the `recent` newest (status without --all), each with its liveness from one scan. */
export async function liveAndRecentViews(stateDir: string, recent: number): Promise<RunView[]> {
  const { recs, rs, settle } = await loadRuns(stateDir, { recent });
  const views = await Promise.all(recs.map((rec) => viewOf(stateDir, rec, rs)));
  await settle(views.map((v) => ({ id: v.record.id, live: v.live })));
  return views;
}

export async function readRun(stateDir: string, id: string): Promise<RunRecord> {
  checkRunId(id);
  await checkStateDir(stateDir);
  const r = await readRecord(stateDir, id);
  if (r?.ok) return r.record;
  // Nothing of it is lost: plain teardown still finds its processes by their run marker, and its logs are files.
  if (r) {
    throw new UserError(
      `--run ${id}: ${runJsonPath(stateDir, id)} is not a valid run record: ${r.reason}`,
      `dynamo-dev teardown   (without --run: stops whatever of it still runs, found by its run marker); its logs stay in ${join(runDir(stateDir, id), 'logs')}`,
    );
  }
  // Not an id: a name given with `up --name` (the newest run of that name: a name is never live twice).
  const runs = await listRuns(stateDir);
  const named = runs.find((x) => x.name === id);
  if (named) return named;
  const recent = runs.slice(0, 5).map((r) => r.name ? `${r.id} (${r.name})` : r.id);
  throw new UserError(
    recent.length > 0
      ? `--run: no run "${id}" in ${stateDir}; recent runs: ${recent.join(', ')}`
      : `--run: no run "${id}": no runs are recorded in ${stateDir}`,
    recent.length > 0 ? 'dynamo-dev status --all' : 'dynamo-dev up [RECIPE]',
  );
}

/**
 * What a `--run` value names: a run id as it is, else the id of the newest run with that name
 * (`up --name`); the value unchanged when neither (the command's own lookup says it is unknown).
 */
export async function resolveRunRef(stateDir: string, ref: string): Promise<string> {
  try {
    checkRunId(ref);
    if ((await stat(runDir(stateDir, ref)).catch(() => null))?.isDirectory()) return ref;
    return (await listRuns(stateDir)).find((r) => r.name === ref)?.id ?? ref;
  } catch {
    return ref;
  }
}

/** Every recorded run with its status and live pids, from one scan of /proc (markers and boot id included). */
export async function listRunViews(stateDir: string): Promise<RunView[]> {
  const { recs, rs, settle } = await loadRuns(stateDir);
  const views = await Promise.all(recs.map((rec) => viewOf(stateDir, rec, rs)));
  await settle(views.map((v) => ({ id: v.record.id, live: v.live })));
  return views;
}

/** A run's liveness, status and losses; records what only a reader can (gone, noticed when). */
export async function judgeRun(stateDir: string, rec: RunRecord, rs: RunsScan): Promise<{ record: RunRecord; liveness: RunLiveness; lost: LostProcess[]; status: RunStatus }> {
  const liveness = livenessIn(stateDir, rec, rs);
  const live = liveness.supervisor || liveness.processes;
  let lost = live ? lostProcesses(rec, liveness) : [];
  let record = rec;
  // Exit codes are only knowable to a process's parent; with no supervisor watching, the first
  // command that finds a process gone records that, and when it noticed.
  if (live && !liveness.supervisor) {
    const noted = noteGone(rec, lost, new Date());
    if (noted) {
      record = (await writeIfUnchanged(stateDir, rec, noted)) ?? rec;
      lost = lostProcesses(record, liveness);
    }
  }
  const status = runStatus(record, { supervisor: liveness.supervisor, processes: liveness.processes, lost: lost.length });
  return { record, liveness, lost, status };
}

/** Writes `next` unless run.json changed since `seen` was read (its writer knows better); the record now on disk. */
async function writeIfUnchanged(stateDir: string, seen: RunRecord, next: RunRecord): Promise<RunRecord | null> {
  const cur = await tryReadRun(stateDir, seen.id);
  if (!cur || cur.updatedAt !== seen.updatedAt) return cur;
  try {
    await writeRun(stateDir, next);
    return next;
  } catch {
    return null; // a read-only state directory: the note is lost, the judgement stands
  }
}

export async function viewOf(stateDir: string, rec: RunRecord, rs: RunsScan): Promise<RunView> {
  const j = await judgeRun(stateDir, rec, rs);
  return {
    record: j.record,
    status: j.status,
    live: j.liveness.supervisor || j.liveness.processes,
    pids: j.liveness.ownedPids,
    marked: j.liveness.marked,
    stopping: supervisorStopping(j.record, j.liveness.supervisor),
    lost: j.lost,
    survivors: (j.liveness.survivors ?? []).map((s) => s.pid),
    logsDir: join(runDir(stateDir, rec.id), 'logs'),
  };
}

/** id given: that run; else the live run if any, else the latest; null when none recorded. */
export async function findRunView(stateDir: string, id?: string): Promise<RunView | null> {
  if (id) {
    const rec = await readRun(stateDir, id);
    return viewOf(stateDir, rec, await scanRuns(stateDir, [rec]));
  }
  // The live run is in the live index; the latest is the newest readable record.
  const views = await liveAndRecentViews(stateDir, 1);
  return views.find((v) => v.live) ?? views[0] ?? null;
}

// Moved out, still reached here: the run folder (run-dirs.ts), the up lock (up-lock.ts), the status words (run-status.ts).
export { createRunDir, removeEmptyRunDir } from './run-dirs.js';
export { acquireUpLock, parseLock, type LockOwner, type UpLock } from './up-lock.js';
export { beingStopped, runStatus, stopOrphaned } from './run-status.js';
import { runStatus } from './run-status.js';

/**
 * The runs that log paths belong to (a run's folder, its logs folder, or a log file in it), each with
 * the logs named (null: the whole run). `diagnose` uses it to count the exits of a run's processes.
 */
export async function runsOfPaths(paths: readonly string[]): Promise<{ stateDir: string; record: RunRecord; only: Set<string> | null }[]> {
  const found = new Map<string, { stateDir: string; record: RunRecord; only: Set<string> | null }>();
  for (const raw of paths) {
    // runs/<id>, runs/<id>/logs (whole run), runs/<id>/logs/<process>.log (that process only).
    const at = runPathParts(raw);
    if (!at) continue;
    const { stateDir, file } = at;
    const rec = await tryReadRun(stateDir, at.id);
    if (!rec) continue;
    const cur = found.get(rec.id) ?? { stateDir, record: rec, only: new Set<string>() };
    if (file === null) cur.only = null;
    else cur.only?.add(file);
    found.set(rec.id, cur);
  }
  return [...found.values()];
}
