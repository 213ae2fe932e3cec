import { mergeDescendants } from './proc.js';
import type { Survivor } from './stop.js';
import type { ProcessRecord, RunRecord, SurvivorRecord } from './types.js';

// What a stop could not end (it outlived SIGKILL: D state) stays the run's: the supervisor and
// teardown record each survivor with its pid and start ticks, and one of a recorded process among
// that process's descendants too, so liveness, status and the next teardown follow it as they follow
// the run's other pids (a group proven by it, a pid never signalled once its start ticks differ).
// Pure: the callers write the record.

/** Pure: the survivors a record keeps; one without start ticks cannot be told from a stranger later, so it is not kept. */
export function survivorRecords(left: readonly Survivor[], at: Date): SurvivorRecord[] {
  const out = new Map<number, SurvivorRecord>();
  for (const s of left) {
    if (typeof s.startTicks !== 'number') continue;
    out.set(s.pid, { name: s.name, pid: s.pid, startTicks: s.startTicks, cmd: s.cmd, at: at.toISOString() });
  }
  return [...out.values()];
}

/** Pure: a process's descendants with its survivors among them (null: nothing to add). Its own pid is its leader, not a descendant. */
export function withSurvivors(p: ProcessRecord, kept: readonly SurvivorRecord[]): ProcessRecord['descendants'] | null {
  const mine = kept.filter((s) => s.name === p.name && s.pid !== p.pid).map((s) => ({ pid: s.pid, startTicks: s.startTicks, cmd: s.cmd }));
  return mine.length > 0 ? mergeDescendants(p.descendants ?? [], mine) : null;
}

/** Pure: the record after a stop that left `left` alive (nothing: the survivors field goes). */
export function keepSurvivors(rec: RunRecord, left: readonly Survivor[], at: Date): RunRecord {
  const kept = survivorRecords(left, at);
  const { survivors: _old, ...rest } = rec;
  if (kept.length === 0) return rest;
  return { ...rest, survivors: kept, processes: rec.processes.map((p) => { const d = withSurvivors(p, kept); return d ? { ...p, descendants: d } : p; }) };
}

/** What a state letter of /proc/PID/stat tells of a process SIGKILL did not end. */
export function survivorStateText(state: string | null | undefined): string {
  if (state === 'D') return 'state D: uninterruptible, stuck in the kernel (e.g. a GPU driver call); it ends when that call returns';
  if (state === 'T' || state === 't') return `state ${state}: stopped or traced`;
  // Out of the kernel call now (S sleeping, R running): SIGKILL reaches it again.
  return state ? `state ${state}: no longer stuck, teardown can end it now` : 'state unknown';
}
