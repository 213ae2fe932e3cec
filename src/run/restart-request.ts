import { closeSync, constants as fsConstants, linkSync, mkdirSync, openSync, readdirSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { readBoundedSync } from '../host/files/bounded-read.js';
import { writeWholeFileSync } from '../host/files/exclusive-write.js';
import { runDir } from './paths.js';
import { isSameProcess } from './proc.js';
import type { Diagnosis } from './diagnosis.js';
import { DEFAULT_GRACE_S } from '../defaults.js';

// `dynamo-dev restart` asks the run's own supervisor to restart a process, so the supervisor stays
// the parent of every process of the run (only a parent learns an exit code; teardown and status
// read what it records). The ask is a file in runs/<id>/restart/ and a SIGUSR2 to the supervisor
// (the signal wakes it; the file says what). The supervisor claims a request by renaming it, then
// appends its progress, one JSON event a line, to <req>.events, ending with a `done` event the
// command waits for (it follows the file as `logs -f` does).

export const RESTART_SIGNAL: NodeJS.Signals = 'SIGUSR2';
/** What run.json's supervisor says it answers; a run started by an older dynamo-dev lacks it. */
export const RESTART_CAPABILITY = 'restart';

export interface RestartRequest {
  id: string;
  process: string;
  graceMs: number;
  /** 0: the run's own readiness deadline. */
  readyTimeoutMs: number;
  /** The asking command: its pid and start time (a request whose asker has ended is never acted on). */
  by: { pid: number; startTicks?: number | null };
}

/** Progress of one restart, as the supervisor appends it. */
export type RestartEvent =
  /** `joined`: another restart of it was under way; this ask follows that one. */
  | { event: 'taken'; process: string; pid: number | null; joined?: true }
  | { event: 'stopped'; process: string; pid: number; signal: string | null; ms: number; note?: string }
  | { event: 'starting'; process: string; pid: number | null; log: string; marker: string }
  | { event: 'log-ready'; process: string; kvTokens: number; ms: number }
  | { event: 'counted'; process: string; by: string }
  | { event: 'done'; ok: true; process: string; ms: number; runState: string }
  | {
      event: 'done'; ok: false; process: string; reason: string; diagnosis: Diagnosis | null;
      lastLines: string[]; log: string | null; runState: string;
    };

const dirOf = (stateDir: string, runId: string) => join(runDir(stateDir, runId), 'restart');
export const eventsPath = (stateDir: string, runId: string, reqId: string) => join(dirOf(stateDir, runId), `${reqId}.events`);
const requestPath = (stateDir: string, runId: string, reqId: string) => join(dirOf(stateDir, runId), `${reqId}.request`);

/** Pure: a request id unique enough for one state directory (pid and time). */
export const newRequestId = (pid: number, now: number) => `${now}-${pid}`;

/** The command's side: leaves the request where the supervisor looks. */
export function writeRestartRequest(stateDir: string, runId: string, r: RestartRequest): void {
  mkdirSync(dirOf(stateDir, runId), { recursive: true, mode: 0o700 });
  const path = requestPath(stateDir, runId, r.id);
  // The events file first, made here exclusively (never a planted file or link followed); the
  // supervisor only appends to it, never creates it.
  closeSync(openSync(eventsPath(stateDir, runId, r.id), fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600));
  // Through an exclusive, unguessable temporary (never `${path}.tmp`, which anyone could plant as a link).
  writeWholeFileSync(path, `${JSON.stringify(r)}\n`, 0o600);
}

/** The command's side, when the supervisor never took it: nothing will answer, so nothing stays asked. */
export function withdrawRestartRequest(stateDir: string, runId: string, reqId: string): boolean {
  try {
    unlinkSync(requestPath(stateDir, runId, reqId));
    return true;
  } catch {
    return false; // taken meanwhile
  }
}

/** A request file is small; anything larger, a FIFO or a link is not one of ours. */
const MAX_REQUEST_BYTES = 64 * 1024;

/** A pending request as read from its file (bounded: never a FIFO, a link or a huge file), or null when it is not one of ours. */
function readRequest(path: string, name: string): RestartRequest | null {
  const read = readBoundedSync(path, { maxBytes: MAX_REQUEST_BYTES });
  if (!read.ok) return null;
  try {
    const r = JSON.parse(read.text) as Partial<RestartRequest>;
    if (typeof r.id !== 'string' || typeof r.process !== 'string' || `${r.id}.request` !== name || typeof r.by?.pid !== 'number') return null;
    return {
      id: r.id, process: r.process,
      graceMs: typeof r.graceMs === 'number' && r.graceMs >= 0 ? r.graceMs : DEFAULT_GRACE_S * 1000,
      readyTimeoutMs: typeof r.readyTimeoutMs === 'number' && r.readyTimeoutMs >= 0 ? r.readyTimeoutMs : 0,
      by: { pid: r.by.pid, startTicks: typeof r.by.startTicks === 'number' ? r.by.startTicks : null },
    };
  } catch {
    return null;
  }
}

/** Whether the command that asked still waits for the answer (same pid and start time; a request without a start time: never). */
export const askerWaits = (r: RestartRequest): boolean => isSameProcess(r.by.pid, r.by.startTicks ?? null);

/** Why a left request is not acted on, in its done event and in the next restart's notice. */
export const orphanReason = (r: RestartRequest): string =>
  `the restart of ${r.process} asked by pid ${r.by.pid} was not acted on: that command ended before the run's supervisor took it`;

/**
 * Every pending request in the run's restart folder: those whose asker still waits, and those it
 * left (the asker ended: killed, or its machine slept past the wait). Files that are not requests
 * of ours (a FIFO, a link, a torn or foreign file) are neither: left alone, never read whole.
 */
function pendingRequests(stateDir: string, runId: string): { name: string; r: RestartRequest; waits: boolean }[] {
  const dir = dirOf(stateDir, runId);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.request')).sort();
  } catch {
    return [];
  }
  const out: { name: string; r: RestartRequest; waits: boolean }[] = [];
  for (const n of names) {
    const r = readRequest(join(dir, n), n);
    if (r) out.push({ name: n, r, waits: askerWaits(r) });
  }
  return out;
}

/** Removes a left request of ours and answers it (done, not acted on), so nothing acts on it later. */
function dropLeft(stateDir: string, runId: string, name: string, r: RestartRequest, runState: string): boolean {
  try {
    unlinkSync(join(dirOf(stateDir, runId), name));
  } catch {
    return false; // taken or withdrawn meanwhile
  }
  appendRestartEvent(stateDir, runId, r.id, { event: 'done', ok: false, process: r.process, reason: orphanReason(r), diagnosis: null, lastLines: [], log: null, runState });
  return true;
}

/**
 * The supervisor's side: every pending request whose asker still waits, each claimed (renamed)
 * so it is answered once. A request left by a command that ended is answered "not acted on" and
 * removed, never acted on: a worker is not stopped for an ask nobody waits for.
 */
export function takeRestartRequests(stateDir: string, runId: string): RestartRequest[] {
  const dir = dirOf(stateDir, runId);
  const out: RestartRequest[] = [];
  for (const { name, r, waits } of pendingRequests(stateDir, runId)) {
    if (!waits) {
      dropLeft(stateDir, runId, name, r, 'unchanged');
      continue;
    }
    try {
      // Claimed by a link and an unlink, not a rename: a file someone put at NAME.taken is never replaced.
      linkSync(join(dir, name), join(dir, `${name}.taken`));
      unlinkSync(join(dir, name));
      out.push(r);
    } catch {
      // withdrawn meanwhile (nobody waits for an answer), or NAME.taken is not ours
    }
  }
  return out;
}

/** The command's side, before it asks: requests left by commands that ended, removed (they are ours) and returned to be said. */
export function withdrawLeftRequests(stateDir: string, runId: string, runState: string): RestartRequest[] {
  return pendingRequests(stateDir, runId).filter((p) => !p.waits && dropLeft(stateDir, runId, p.name, p.r, runState)).map((p) => p.r);
}

/** The supervisor's side: one progress event (a restart is never stopped by a failed note). */
export function appendRestartEvent(stateDir: string, runId: string, reqId: string, e: RestartEvent): void {
  try {
    // Appended to the file the command made (O_APPEND without O_CREAT), never through a link.
    const fd = openSync(eventsPath(stateDir, runId, reqId), fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    try {
      writeSync(fd, `${JSON.stringify(e)}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    // the command then says the supervisor did not answer
  }
}
