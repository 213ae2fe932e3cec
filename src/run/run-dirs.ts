import { mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { runDir, runsDir } from './paths.js';

// A run's folder: created before anything of it exists, removed only while empty.

/**
 * Creates runs/<id>/ (with logs/ and discovery/) private to the user, exclusively: mkdir never
 * follows a symlink planted at the name, and an id already taken gets a suffix (-2, -3, ...).
 * Returns the id used.
 */
export function createRunDir(stateDir: string, id: string): string {
  for (let n = 1; n <= 100; n++) {
    const candidate = n === 1 ? id : `${id}-${n}`;
    const dir = runDir(stateDir, candidate);
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw new UserError(`${dir}: cannot create the run folder (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    mkdirSync(join(dir, 'logs'), { mode: 0o700 });
    mkdirSync(join(dir, 'discovery'), { mode: 0o700 });
    return candidate;
  }
  throw new UserError(`${runDir(stateDir, id)}: that run id and 99 suffixes are taken; clean up ${runsDir(stateDir)}`);
}

/** Removes a run dir nothing was started in (empty logs/ and discovery/ only): never anything with content. */
export function removeEmptyRunDir(stateDir: string, id: string): void {
  const dir = runDir(stateDir, id);
  for (const d of [join(dir, 'logs'), join(dir, 'discovery'), dir]) {
    try {
      rmdirSync(d);
    } catch {
      return; // not empty (or gone): leave it
    }
  }
}
