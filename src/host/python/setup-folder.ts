import { accessSync, constants, lstatSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MARKER_FILE, parseMarker } from '../../plan/setup-install.js';
import { readBoundedSync } from '../files/bounded-read.js';
import { errnoText } from '../files/errno-text.js';
import { kernelFs } from '../files/kernel-fs.js';

export { errnoText };

// Whose folder an environment's folder is: setup builds only where nothing is, or over what it
// made itself (its owner file or its completion marker), never over anyone else's file or folder.

export type DirState =
  | { kind: 'absent' } | { kind: 'complete' } | { kind: 'ours-incomplete' } | { kind: 'empty' }
  | { kind: 'foreign'; why: string };

/** Setup's own mark on a folder it made, written first (before any installer runs). */
export const OWNER_FILE = '.dynamo-dev-setup-owner';
export const OWNER_TEXT = 'made by dynamo-dev setup: an unfinished environment, removed and built again by the next setup\n';

/**
 * What is at an environment's folder: nothing, a complete environment (its marker), one of ours
 * left incomplete (our owner file there: interrupted or failed, rebuilt from scratch), an empty
 * folder, or anything else (a file, a link, a folder of someone's, one we cannot read), which
 * setup never removes, writes into or builds over. A file merely named setup.log is not ours.
 */
export function dirState(dir: string): DirState {
  let st;
  try {
    st = lstatSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return absentUnder(dir);
    return { kind: 'foreign', why: `cannot be examined (${errnoText(code)})` };
  }
  if (st.isSymbolicLink()) return { kind: 'foreign', why: 'is a symbolic link' };
  if (!st.isDirectory()) return { kind: 'foreign', why: st.isFile() ? 'is a file, not a folder' : 'is not a folder (a pipe, socket or device)' };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    return { kind: 'foreign', why: `cannot be read (${errnoText((err as NodeJS.ErrnoException).code)})` };
  }
  if (names.length === 0) return { kind: 'empty' };
  if (names.includes(MARKER_FILE)) {
    const m = readBoundedSync(join(dir, MARKER_FILE), { maxBytes: 64 * 1024 });
    if (m.ok && parseMarker(m.text)) return { kind: 'complete' };
  }
  if (names.includes(OWNER_FILE)) {
    const o = readBoundedSync(join(dir, OWNER_FILE), { maxBytes: 4096 });
    if (o.ok && o.text === OWNER_TEXT) return { kind: 'ours-incomplete' };
  }
  return { kind: 'foreign', why: 'exists and is not an environment dynamo-dev setup made' };
}

/**
 * Why a folder setup keeps things in (its cache root: envs/, setup-locks/) cannot be used, or null
 * when it is a writable folder or can be made: a file there or above it, a kernel file system, no
 * write permission. Said before anything runs, instead of mkdir's raw ENOTDIR later.
 */
export function unusableFolder(path: string): string | null {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return `cannot be examined (${errnoText(code)})`;
    const below = absentUnder(path);
    return below.kind === 'foreign' ? below.why : null;
  }
  if (!st.isDirectory()) return st.isFile() ? 'is a file, not a folder' : 'is not a folder (a pipe, socket or device)';
  try {
    accessSync(path, constants.W_OK);
  } catch (err) {
    return `is not writable (${errnoText((err as NodeJS.ErrnoException).code)})`;
  }
  return null;
}

/** A folder that is not there yet: can it be made? The nearest existing ancestor must be a folder we may write in. */
function absentUnder(dir: string): DirState {
  for (let up = dirname(dir); ; up = dirname(up)) {
    let st;
    try {
      st = statSync(up);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && up !== dirname(up)) continue;
      return { kind: 'foreign', why: `cannot be made: ${up} cannot be examined (${errnoText(code)})` };
    }
    if (!st.isDirectory()) return { kind: 'foreign', why: `cannot be made: ${up} is a file, not a folder` };
    const kernel = kernelFs(up);
    if (kernel) return { kind: 'foreign', why: `cannot be made: ${up} is on the kernel's ${kernel} file system, which holds no folders of ours` };
    try {
      accessSync(up, constants.W_OK);
    } catch (err) {
      return { kind: 'foreign', why: `cannot be made: ${up} is not writable (${errnoText((err as NodeJS.ErrnoException).code)})` };
    }
    return { kind: 'absent' };
  }
}
