import { randomBytes } from 'node:crypto';
import { closeSync, constants as fsConstants, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';

// Writing a file whole: a temporary file beside the target, created exclusively (O_CREAT|O_EXCL:
// a file, FIFO or symlink someone planted at that name is never opened, followed or truncated;
// O_NOFOLLOW too, for file systems where O_EXCL alone is not enough), written, then renamed over
// the target. The temporary name is unpredictable, and only a temporary file this call created is
// removed when anything fails: never one that was there before.

const FLAGS = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW;

/** A temporary name beside `path` nobody can guess ahead: `<path>.<pid>.<random>.tmp`. */
export const unguessableTmp = (path: string): string => `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;

/**
 * Writes `data` to `path` via an exclusively created temporary file and a rename. Errors are the
 * fs errors (ENOSPC, EACCES, ...); whatever failed, no temporary file of ours is left behind.
 */
export async function writeWholeFile(path: string, data: string | Uint8Array, mode = 0o666): Promise<void> {
  let tmp = '';
  let fh;
  for (let attempt = 0; ; attempt++) {
    tmp = unguessableTmp(path);
    try {
      fh = await open(tmp, FLAGS, mode);
      break;
    } catch (err) {
      // Someone's file at a random name: try another name; anything else is the caller's to say.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 4) throw err;
    }
  }
  try {
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** writeWholeFile, synchronously (the supervisor's record writes). */
export function writeWholeFileSync(path: string, data: string | Uint8Array, mode = 0o666): void {
  let tmp = '';
  let fd = -1;
  for (let attempt = 0; fd < 0; attempt++) {
    tmp = unguessableTmp(path);
    try {
      fd = openSync(tmp, FLAGS, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 4) throw err;
    }
  }
  try {
    try {
      writeFileSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // gone already
    }
    throw err;
  }
}
