import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RunLiveness } from './liveness.js';
import { shellQuote } from '../plan/script.js';
import { runPathParts } from './paths.js';
import { livenessIn, markerIn, readBootId, realMarkerReader, scanRuns, type MarkerReader } from './run-scan.js';
import type { RunRecord } from './types.js';

// A run started with another state dir (DYNAMO_DEV_HOME=/x, --state-dir, a second terminal) is
// invisible to this state dir's records, yet its processes are someone's live experiment, not
// leftovers: doctor must not call them leftovers and `teardown --orphans` must not stop them.
// Every process `up` starts carries its run dir in RUN_MARKER (run-scan.ts), so the other run is
// found from the process itself. Truth first: only a record that proves the run live here and now
// (readable in a trusted state dir, this boot, supervisor alive, the process one the run owns)
// spares a process; anything less leaves it a leftover, as before.

/** A process that belongs to a live run of another state directory. */
export interface OtherRun {
  pid: number;
  runId: string;
  /** The other run's state directory (real path, as the marker names it). */
  stateDir: string;
}

/** The real path of a state dir (the spelling given when it does not exist). */
export function realStateDir(stateDir: string): string {
  try {
    return realpathSync(stateDir);
  } catch {
    return resolve(stateDir);
  }
}

/**
 * Pure: the run a marker names when it is a run dir of ANOTHER state dir (`realHere` is this one's
 * real path); null for no marker, a value that is no run dir, or a run of this state dir (its own
 * records judge those).
 */
export function foreignRunOf(marker: string | null, realHere: string): { stateDir: string; id: string } | null {
  if (marker === null) return null;
  const at = runPathParts(marker);
  // Only runs/<id> itself: the marker is never a logs path.
  if (!at || at.file !== null || resolve(marker) !== resolve(at.stateDir, 'runs', at.id)) return null;
  if (resolve(at.stateDir) === resolve(realHere)) return null;
  return { stateDir: at.stateDir, id: at.id };
}

export type OtherRunVerdict = { live: true } | { live: false; why: string };

/**
 * Pure: whether a process carrying the marker of `rec`'s run is a process of that run live now.
 * `rec` null: no readable record (missing, invalid, untrusted state dir). `liveness`: the record
 * judged on a scan of now (livenessIn). Both boot ids must be known and equal: a record that
 * cannot say it is from this boot proves nothing. The marker is enough once the run's supervisor
 * is alive: only `up` sets it, everything the run forks inherits it, and the record can lag a
 * run that is starting or stopping (seen while a suite ran: a frontend spawned through a wrapper,
 * and a stopping run's frontend, missing from the record's pids for a moment, were called leftovers,
 * and `teardown --orphans` would have stopped them). What a lost worker left goes with its run too:
 * that run's own status and `teardown --run` deal with it.
 */
export function judgeOtherRun(rec: RunRecord | null, bootId: string | null, liveness: RunLiveness | null): OtherRunVerdict {
  if (rec === null || liveness === null) return { live: false, why: 'no readable run record' };
  if (bootId === null || typeof rec.bootId !== 'string' || rec.bootId !== bootId) return { live: false, why: 'the record is not from this boot' };
  // A run whose supervisor (foreground `up` or detached one) is gone is stopped or orphaned:
  // nobody watches it, and what it left holds the GPU like any leftover.
  if (!liveness.supervisor) return { live: false, why: 'its supervisor is not running' };
  return { live: true };
}

export interface OtherRunsDeps {
  reader?: MarkerReader;
  /** The record of runs/<id> in a state dir; null when missing, invalid or untrusted. */
  readRecord?: (stateDir: string, id: string) => Promise<RunRecord | null>;
}

async function trustedRecord(stateDir: string, id: string): Promise<RunRecord | null> {
  const { readTrustedRecord } = await import('./state.js');
  return readTrustedRecord(stateDir, id);
}

/**
 * Of these pids (engine processes outside this state dir's live runs), the ones that belong to a
 * live run of another state directory. Only processes of our own uid have their environment read.
 */
export async function otherLiveRuns(stateDir: string, pids: readonly number[], d: OtherRunsDeps = {}): Promise<Map<number, OtherRun>> {
  const reader = d.reader ?? realMarkerReader;
  const readRecord = d.readRecord ?? trustedRecord;
  const out = new Map<number, OtherRun>();
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  if (uid === null || pids.length === 0) return out;
  const here = realStateDir(stateDir);
  const byRun = new Map<string, { stateDir: string; id: string; pids: number[] }>();
  for (const pid of pids) {
    if (reader.uidOf(pid) !== uid) continue;
    const env = reader.environ(pid);
    const run = foreignRunOf(env === null ? null : markerIn(env), here);
    if (!run) continue;
    const key = `${run.stateDir}\0${run.id}`;
    const cur = byRun.get(key) ?? { ...run, pids: [] };
    cur.pids.push(pid);
    byRun.set(key, cur);
  }
  const bootId = readBootId();
  await Promise.all([...byRun.values()].map(async (r) => {
    const rec = await readRecord(r.stateDir, r.id).catch(() => null);
    const liveness = rec ? livenessIn(r.stateDir, rec, await scanRuns(r.stateDir, [rec], reader)) : null;
    // One verdict for the run: every pid carrying its marker shares it.
    if (!judgeOtherRun(rec, bootId, liveness).live) return;
    for (const pid of r.pids) out.set(pid, { pid, runId: r.id, stateDir: r.stateDir });
  }));
  return out;
}

/** Items grouped by the run they belong to (a run is its state dir and id), in first-seen order. */
export function groupByRun<T extends Pick<OtherRun, 'runId' | 'stateDir'>>(items: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const it of items) {
    const key = `${it.stateDir}\0${it.runId}`;
    groups.set(key, [...(groups.get(key) ?? []), it]);
  }
  return [...groups.values()];
}

/** The command that shows another state dir's run (read only: it stops nothing). */
export function statusCommandFor(r: Pick<OtherRun, 'stateDir'>): string {
  return `dynamo-dev status --state-dir ${shellQuote(r.stateDir)}`;
}

/** The command that stops another state dir's run (what the user runs to free its GPU memory). */
export const stopCommandFor = (r: Pick<OtherRun, 'runId' | 'stateDir'>): string =>
  `dynamo-dev teardown --state-dir ${shellQuote(r.stateDir)} --run ${shellQuote(r.runId)}`;
