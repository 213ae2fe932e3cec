import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './paths.js';

// `teardown` from another terminal stops a foreground `up` by signalling it; before that it leaves
// this note in the run's folder so the supervisor can say who stopped it (instead of a bare
// "stopped" that reads like the user's own Ctrl-C).

const FILE = 'stop-request.json';

export function writeStopRequest(stateDir: string, runId: string, by: { pid: number; command: string }): void {
  try {
    writeFileSync(join(runDir(stateDir, runId), FILE), `${JSON.stringify({ ...by, at: new Date().toISOString() })}\n`);
  } catch {
    // only the wording of the supervisor's stop line depends on it
  }
}

/** "pid 1234" of the teardown that asked, or null when none did. */
export function readStopRequest(stateDir: string, runId: string): string | null {
  try {
    const r = JSON.parse(readFileSync(join(runDir(stateDir, runId), FILE), 'utf8')) as { pid?: unknown };
    return typeof r.pid === 'number' ? `pid ${r.pid}` : 'teardown';
  } catch {
    return null;
  }
}
