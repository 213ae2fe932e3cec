import { mkdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { UserError } from '../errors.js';
import { runsDir } from './paths.js';

// The state directory is trusted with which processes teardown signals: a run.json planted by
// someone else could name any process. So, as ssh does with ~/.ssh, it is used only when it (and
// its runs/) is a directory owned by the user (or root) that no one else may write. A state dir
// that is a file is an input error too, not "no runs".

const ownUid = (): number | null => (typeof process.getuid === 'function' ? process.getuid() : null);

/** Pure: what is wrong with a state directory (or its runs/) given its stat; null when it may be trusted. */
export function stateDirProblem(path: string, st: Pick<Stats, 'isDirectory' | 'uid' | 'mode'>, uid: number | null, label = 'state directory'): string | null {
  if (!st.isDirectory()) return `${path}: the ${label} is a file, not a folder; move it away or choose another with --state-dir`;
  if (uid === null) return null; // no uids on this platform
  if (st.uid !== uid && st.uid !== 0) {
    return `${path}: the ${label} belongs to uid ${st.uid}, not to you (uid ${uid}); its records could name any process, so it is not used`;
  }
  if ((st.mode & 0o022) !== 0) {
    const who = (st.mode & 0o002) !== 0 ? 'everyone' : 'its group';
    return `${path}: the ${label} is writable by ${who} (mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}); anyone who can write it could make teardown signal their choice of process`;
  }
  return null;
}

const fixFor = (path: string) => `chmod go-w ${path}   (and chown it to yourself), or use another --state-dir`;

async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ENOTDIR') throw new UserError(`${path}: a part of this path is a file, not a folder; choose another --state-dir`);
    throw new UserError(`${path}: cannot read the state directory (${code ?? (err as Error).message})`);
  }
}

async function check(path: string, label: string): Promise<boolean> {
  const st = await statOrNull(path);
  if (!st) return false;
  const problem = stateDirProblem(path, st, ownUid(), label);
  if (problem) throw new UserError(problem, st.isDirectory() ? fixFor(path) : undefined);
  return true;
}

/**
 * For readers: throws a UserError for a state dir (or runs/) that is a file or not trusted;
 * false when there is none yet (nothing recorded), true when it may be read.
 */
export async function checkStateDir(stateDir: string): Promise<boolean> {
  if (!(await check(stateDir, 'state directory'))) return false;
  return check(runsDir(stateDir), 'runs folder');
}

/** For `up`: creates the state dir and runs/ private to the user (0700) when missing, then checks both. */
export async function prepareStateDir(stateDir: string): Promise<void> {
  if (!(await check(stateDir, 'state directory'))) await mkdir(stateDir, { recursive: true, mode: 0o700 }).catch(mkdirFailed(stateDir));
  if (!(await check(runsDir(stateDir), 'runs folder'))) await mkdir(runsDir(stateDir), { mode: 0o700 }).catch(mkdirFailed(runsDir(stateDir)));
  // Created meanwhile by someone else, or created by us: judge what is there now.
  await check(stateDir, 'state directory');
  await check(runsDir(stateDir), 'runs folder');
}

const mkdirFailed = (path: string) => (err: NodeJS.ErrnoException) => {
  if (err.code === 'EEXIST') return; // judged right after
  throw new UserError(`${path}: cannot create the state directory (${err.code ?? err.message})`, 'choose a writable one with --state-dir');
};
