import { mergeDescendants } from './proc.js';
import type { DescendantRecord, ProcessRecord } from './types.js';

// Engine processes (VLLM::*) under each running child, recorded while it runs so teardown can
// find and verify them even after the child is gone. How they are found is injected (`find`).

/** Re-reads one running process's descendants into its record; true when the record changed. */
export function recordDescendants(rec: ProcessRecord, find: (pid: number) => DescendantRecord[]): boolean {
  if (rec.pid === null) return false;
  let found: DescendantRecord[];
  try {
    found = find(rec.pid);
  } catch {
    return false; // a scan that failed changes nothing; the next one will tell
  }
  const merged = mergeDescendants(rec.descendants, found);
  if (merged === null) return false;
  rec.descendants = merged;
  return true;
}
