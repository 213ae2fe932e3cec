import { spawn } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readBoundedSync } from '../host/files/bounded-read.js';
import { parseProcLocks, splitDev } from '../host/procs/parse-proc.js';
import { UserError } from '../errors.js';
import { parseLock } from './up-lock.js';

// Ports of runs that are starting: two `up --name` started together must not both take the ports
// nobody holds yet. The choice is made one `up` at a time under the state directory's ports lock
// (held for the moment of choosing and noting), and each `up` notes the ports it took in its own
// up lock file (up.lock, up.NAME.lock), held while it starts. A note counts while its lock is held
// (the kernel's /proc/locks says so, whatever the pid namespace); after that the run's record names
// its ports (written before the first spawn), so some record or note always names them.

/** How long an `up` waits for another's port choice (a choice takes well under a second). */
export const PORTS_LOCK_WAIT_S = 30;

export const portsLockPath = (stateDir: string) => join(stateDir, 'ports.lock');

/** A starting run's ports: the up lock file it holds says them. */
export interface Reservation { runId: string; name: string | null; pid: number; ports: number[] }

/**
 * Runs `fn` holding the state directory's ports lock (flock(2) through flock(1), waiting at most
 * PORTS_LOCK_WAIT_S): one port choice at a time. A wait that runs out is a UserError saying so.
 */
export async function withPortsLock<T>(stateDir: string, fn: () => Promise<T>, waitS = PORTS_LOCK_WAIT_S): Promise<T> {
  const path = portsLockPath(stateDir);
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW, 0o600);
  } catch (err) {
    throw new UserError(`${path}: cannot open the ports lock (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const c = spawn('flock', ['--wait', String(waitS), '--exclusive', '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
      c.once('error', reject);
      c.once('exit', (status) => resolve(status));
    }).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`cannot lock ${path}: flock(1) cannot run (${err.code ?? err.message}); it comes with util-linux`);
    });
    if (code === 1) {
      throw new UserError(
        `another up has been choosing its ports in ${stateDir} for ${waitS} s (${path} is held); nothing started`,
        'try again in a moment; if it stays held, see who holds it: fuser -v ' + path,
      );
    }
    if (code !== 0) throw new Error(`cannot lock ${path}: flock exited ${code}`);
    return await fn();
  } finally {
    closeSync(fd); // releases the lock
  }
}

/** The ports of runs starting in the state directory now (their up lock held), but the one at `own`. */
export function reservations(stateDir: string, own: string): Reservation[] {
  let names: string[];
  let locks;
  try {
    names = readdirSync(stateDir).filter((n) => /^up(?:\.[^/]+)?\.lock$/.test(n) && join(stateDir, n) !== own);
    locks = parseProcLocks(readFileSync('/proc/locks', 'utf8')).filter((l) => l.kind === 'FLOCK' && !l.blocked);
  } catch {
    return [];
  }
  const out: Reservation[] = [];
  for (const n of names) {
    const path = join(stateDir, n);
    let st;
    try {
      st = statSync(path, { bigint: true });
    } catch {
      continue;
    }
    if (!st.isFile()) continue;
    const { major, minor } = splitDev(st.dev);
    if (!locks.some((l) => l.inode === st.ino.toString() && l.major === major && l.minor === minor)) continue; // not held: no one starting
    const r = readBoundedSync(path, { maxBytes: 64 * 1024 });
    const owner = r.ok ? parseLock(r.text) : null;
    if (!owner?.ports?.length) continue;
    out.push({ runId: owner.runId, name: n === 'up.lock' ? null : n.slice(3, -5), pid: owner.pid, ports: owner.ports });
  }
  return out;
}
