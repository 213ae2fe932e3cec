import { DiskFullError } from '../errors.js';
import { runDir, runJsonPath } from './paths.js';
import type { RunCore } from './run-core.js';
import { MIN_FREE_BYTES, type SupervisorResult } from './supervisor-types.js';

/**
 * What a run does before its first spawn: the per-run discovery folders (DYN_FILE_KV) made before
 * anyone registers in them, and run.json written. Nothing may run unrecorded, nor on a disk too
 * full for the record to name the pids it starts (MIN_FREE_BYTES): a full disk is up's failure,
 * said with the file and what to do, nothing started. Returns that failure, or null to go on.
 */
export function recordBeforeSpawn(s: RunCore): SupervisorResult | null {
  const dirs = new Set(s.o.plan.processes.map((p) => p.env.DYN_FILE_KV).filter((d): d is string => Boolean(d)));
  for (const d of dirs) s.d.mkdirs(d);
  s.record.updatedAt = new Date().toISOString();
  try {
    const free = s.d.freeBytes(runDir(s.o.stateDir, s.o.runId));
    if (free !== null && free < MIN_FREE_BYTES) throw new DiskFullError(runJsonPath(s.o.stateDir, s.o.runId), 'ENOSPC');
    s.d.writeRun(s.o.stateDir, s.record);
    return null;
  } catch (err) {
    if (!(err instanceof DiskFullError)) throw err;
    s.finishing = true;
    s.emitEvent({ event: 'failed', reason: `${err.message}; nothing was started`, process: null, diagnosis: null, hint: null, lastLines: [], log: null });
    return { outcome: 'failed', code: 1, reason: err.message };
  }
}
