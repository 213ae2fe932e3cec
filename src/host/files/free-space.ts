import { statfsSync } from 'node:fs';

// How much room a filesystem has left for us (statfs(2): blocks available to an unprivileged user).

/** Bytes available under `path`; null when the filesystem does not say (statfs fails, or reports no blocks at all, as some FUSE mounts do). */
export function freeBytes(path: string): number | null {
  try {
    const s = statfsSync(path);
    if (!(s.blocks > 0)) return null;
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}
