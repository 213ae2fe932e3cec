import type { RunCore } from './run-core.js';
import { survivorRecords, withSurvivors } from './survivors.js';
import type { Survivor } from './stop.js';

/**
 * What outlived SIGKILL stays the run's in run.json (pid, start ticks; a process's among its
 * descendants), so once we exit, status still shows the run with them and teardown tries them again.
 */
export function keepSurvivors(run: RunCore, remaining: Survivor[]): void {
  const kept = survivorRecords(remaining, new Date());
  if (kept.length === 0) return;
  run.record.survivors = kept;
  for (const p of run.procs) {
    const d = withSurvivors(p.rec, kept);
    if (d) p.rec.descendants = d;
  }
  run.writer.persist();
}
