import { stat } from 'node:fs/promises';
import { UserError } from '../errors.js';

/**
 * `doctor --logs PATH...`: a path that does not exist is the user's typo, not a failed check.
 * Checked before any check starts so it is one line on stderr and exit 2 (CLI.md), instead of
 * three log checks each reporting the same crash.
 */
export async function assertLogPaths(paths: string[]): Promise<void> {
  for (const p of paths) {
    try {
      await stat(p);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UserError(code === 'ENOENT' || code === 'ENOTDIR'
        ? `--logs: ${p}: no such file or folder; pass log files or folders (a run's logs are in runs/<run-id>/logs of the state directory)`
        : `--logs: ${p}: cannot read (${code ?? (err as Error).message})`);
    }
  }
}
