import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { readBoundedSync } from '../host/files/bounded-read.js';
import { writeWholeFileSync } from '../host/files/exclusive-write.js';
import { runDir } from './paths.js';

// `teardown` from another terminal stops a foreground `up` by signalling it; before that it leaves
// this note in the run's folder so the supervisor can say who stopped it (instead of a bare
// "stopped" that reads like the user's own Ctrl-C).

const FILE = 'stop-request.json';

export function writeStopRequest(stateDir: string, runId: string, by: { pid: number; command: string }): void {
  const path = join(runDir(stateDir, runId), FILE);
  // Something that is not a file of ours there (a link, a FIFO, a folder) is left as it is: only
  // the wording of the stop line depends on this note.
  try {
    if (lstatSync(path, { throwIfNoEntry: false })?.isFile() === false) return;
    // Whole, through an exclusive temporary: never written through a link or into a FIFO.
    writeWholeFileSync(path, `${JSON.stringify({ ...by, at: new Date().toISOString() })}\n`);
  } catch {
    // only the wording of the supervisor's stop line depends on it
  }
}

/** "pid 1234" of the teardown that asked, or null when none did. */
export function readStopRequest(stateDir: string, runId: string): string | null {
  // Read bounded: a FIFO there must not stop the supervisor's stop.
  const read = readBoundedSync(join(runDir(stateDir, runId), FILE), { maxBytes: 4096 });
  if (!read.ok) return null;
  try {
    const r = JSON.parse(read.text) as { pid?: unknown };
    return typeof r.pid === 'number' ? `pid ${r.pid}` : 'teardown';
  } catch {
    return null;
  }
}
