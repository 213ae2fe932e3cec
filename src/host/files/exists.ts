import { existsSync } from 'node:fs';

/** The paths that exist now (a run's logs: a process that never started wrote none). */
export function existingPaths(paths: readonly string[]): string[] {
  return paths.filter((p) => existsSync(p));
}
