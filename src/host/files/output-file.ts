import { constants } from 'node:fs';
import { access, lstat, writeFile } from 'node:fs/promises';
import { UserError } from '../../errors.js';
import { writeWholeFile } from './exclusive-write.js';

// `-o FILE` for generated files: never overwrites by surprise, never leaves half a file.

function why(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') return 'its directory does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return code ?? String(err);
}

/** What is at `path` when it is no regular file (a link, a folder, a FIFO...): never replaced, --force or not. */
async function notAFile(path: string): Promise<string | null> {
  const there = await lstat(path).catch(() => null);
  if (!there || there.isFile()) return null;
  return there.isSymbolicLink() ? 'a symbolic link' : there.isDirectory() ? 'a folder' : there.isFIFO() ? 'a named pipe (FIFO)' : 'not a regular file';
}

/**
 * Refuses an existing file unless `force`, and a link, folder or FIFO always (checked before any
 * other work, so nothing is done in vain).
 */
export async function checkOutputFile(path: string, force: boolean): Promise<void> {
  const what = await notAFile(path);
  if (what) throw new UserError(`-o ${path}: is ${what}; give the path of a new or regular file`);
  if (force) return;
  try {
    await access(path, constants.F_OK);
  } catch {
    return;
  }
  throw new UserError(`-o ${path}: the file exists; pass --force to overwrite it`);
}

/**
 * Without `force` the file is created exclusively (a file appearing meanwhile is not clobbered);
 * with it, written next to the target and renamed over it, so a reader never sees half a manifest.
 */
export async function writeOutputFile(path: string, text: string, force: boolean): Promise<void> {
  if (!force) {
    try {
      await writeFile(path, text, { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException)?.code === 'EEXIST') throw new UserError(`-o ${path}: the file exists; pass --force to overwrite it`);
      throw new UserError(`-o ${path}: cannot write (${why(err)})`);
    }
    return;
  }
  // Checked again just before the rename (the check above ran before the manifest was made).
  const what = await notAFile(path);
  if (what) throw new UserError(`-o ${path}: is ${what}; give the path of a new or regular file`);
  try {
    await writeWholeFile(path, text);
  } catch (err) {
    throw new UserError(`-o ${path}: cannot write (${why(err)})`);
  }
}
