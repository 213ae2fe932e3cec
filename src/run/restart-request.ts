import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './paths.js';
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
  by: { pid: number };
}

/** Progress of one restart, as the supervisor appends it. */
export type RestartEvent =
  | { event: 'taken'; process: string; pid: number | null }
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
  writeFileSync(`${path}.tmp`, `${JSON.stringify(r)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
  writeFileSync(eventsPath(stateDir, runId, r.id), '', { flag: 'a', mode: 0o600 });
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

/** The supervisor's side: every pending request, each claimed (renamed) so it is answered once. */
export function takeRestartRequests(stateDir: string, runId: string): RestartRequest[] {
  const dir = dirOf(stateDir, runId);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.request')).sort();
  } catch {
    return [];
  }
  const out: RestartRequest[] = [];
  for (const n of names) {
    const taken = join(dir, `${n}.taken`);
    try {
      renameSync(join(dir, n), taken);
      const r = JSON.parse(readFileSync(taken, 'utf8')) as Partial<RestartRequest>;
      if (typeof r.id !== 'string' || typeof r.process !== 'string' || `${r.id}.request` !== n) continue;
      out.push({
        id: r.id, process: r.process,
        graceMs: typeof r.graceMs === 'number' && r.graceMs >= 0 ? r.graceMs : DEFAULT_GRACE_S * 1000,
        readyTimeoutMs: typeof r.readyTimeoutMs === 'number' && r.readyTimeoutMs >= 0 ? r.readyTimeoutMs : 0,
        by: { pid: typeof r.by?.pid === 'number' ? r.by.pid : 0 },
      });
    } catch {
      // withdrawn meanwhile, or not ours to read: nobody waits for an answer
    }
  }
  return out;
}

/** The supervisor's side: one progress event (a restart is never stopped by a failed note). */
export function appendRestartEvent(stateDir: string, runId: string, reqId: string, e: RestartEvent): void {
  try {
    appendFileSync(eventsPath(stateDir, runId, reqId), `${JSON.stringify(e)}\n`);
  } catch {
    // the command then says the supervisor did not answer
  }
}
