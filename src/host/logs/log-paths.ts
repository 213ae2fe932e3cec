import { statLogPath } from './log-scan.js';

/**
 * `doctor --logs PATH...`: a path that does not exist is the user's typo, not a failed check.
 * Checked before any check starts so it is one line on stderr and exit 2 (CLI.md), instead of
 * three log checks each reporting the same crash.
 */
export async function assertLogPaths(paths: string[]): Promise<void> {
  for (const p of paths) {
    await statLogPath(p, { label: '--logs: ', hint: " (a run's logs are in runs/<run-id>/logs of the state directory)" });
  }
}
