import { spawnSync } from 'node:child_process';
import { closeSync, constants as fsConstants, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { asDiskFull, UserError } from '../errors.js';
import { join } from 'node:path';
import { sleepSync } from './clock.js';
import { upLockPath } from './paths.js';
import { prepareStateDir } from './state-dir.js';

// One `up` per state directory (and name): the lock `up` holds while it starts a run.

export interface LockOwner {
  pid: number;
  runId: string;
  createdAt?: string;
  /** The ports the starting run takes (port-reservations.ts): others' port choice keeps off them. */
  ports?: number[];
}

/** Pure: the owner a lock file describes; null when it says nothing usable (being written, or empty). */
export function parseLock(text: string): LockOwner | null {
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (typeof o.pid !== 'number' || !Number.isInteger(o.pid) || o.pid <= 0) return null;
    const ports = Array.isArray(o.ports) ? o.ports.filter((p): p is number => Number.isInteger(p) && p > 0 && p <= 65535) : [];
    return { pid: o.pid, runId: String(o.runId ?? '?'), createdAt: o.createdAt, ...(ports.length > 0 ? { ports } : {}) };
  } catch {
    return null;
  }
}

export interface UpLock {
  /** The lock file. */
  path: string;
  /** Records the run id in the lock file (for the message a second `up` prints). */
  describe(runId: string): void;
  /** Records the ports the run takes: another `up`'s port choice keeps off them while this lock is held. */
  reserve(ports: number[]): void;
  release(): Promise<void>;
}

/**
 * One `up` per state directory: an flock(2) on up.lock, held for the life of `up` and released by
 * the kernel when it ends however it ends (SIGKILL too). The kernel judges it, not a pid: a pid
 * means nothing across pid namespaces (a container sharing the state dir). Node has no flock, so
 * flock(1) takes it on our open file description (passed as its fd 3), which we keep open.
 * A held lock -> UserError naming the run and pid its holder wrote in the file.
 */
export async function acquireUpLock(stateDir: string, runId: string, name?: string): Promise<UpLock> {
  const path = upLockPath(stateDir, name);
  await prepareStateDir(stateDir);
  const fd = lockOrOwner(path, (owner) => new UserError(
      owner ? `another up${name ? ` --name ${name}` : ''} is running: run ${owner.runId} (pid ${owner.pid}); one up per state directory${name ? ' and name' : ' unless each run has a name'}` : `another up${name ? ` --name ${name}` : ''} is starting in this state directory; one up per state directory${name ? ' and name' : ' unless each run has a name'}`,
      owner ? `dynamo-dev teardown --run ${owner.runId}   (or up --name NAME for a second run beside it)` : 'wait for it, or up --name NAME for a second run beside it',
    ));
  let reserved: number[] = [];
  let described = runId;
  const describe = (id: string) => {
    described = id;
    const text = JSON.stringify({ pid: process.pid, runId: id, createdAt: new Date().toISOString(), ...(reserved.length > 0 ? { ports: reserved } : {}) } satisfies LockOwner);
    try {
      ftruncateSync(fd, 0);
      writeSync(fd, text, 0);
    } catch (err) {
      throw asDiskFull(err, path);
    }
  };
  try {
    describe(runId);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  let open = true;
  return {
    path,
    describe,
    reserve(ports) {
      reserved = [...new Set(ports)].sort((a, b) => a - b);
      describe(described);
    },
    async release() {
      // Closing our descriptor releases the lock; the file stays (removing it would race a waiter).
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/**
 * Opens the lock file and takes its flock(2) without waiting: the open descriptor (the lock is held
 * while it stays open); a held lock -> `refuse(what its holder wrote)` thrown.
 */
function lockOrOwner(path: string, refuse: (owner: LockOwner | null) => Error): number {
  let fd: number;
  try {
    // Non-blocking: a FIFO put where the lock lives must not hang the open.
    fd = openSync(path, fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK, 0o600);
  } catch (err) {
    throw new UserError(`${path}: cannot open the lock (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (!fstatSync(fd).isFile()) {
    // Ours is always a regular file: something else put this here, so it is not ours to remove.
    closeSync(fd);
    throw new UserError(`${path}: not a regular file, so not our lock; nothing was started`, `move it away (it is not ours to remove), then run the command again: mv ${path} ${path}.moved`);
  }
  const r = spawnSync('flock', ['--nonblock', '--exclusive', '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
  if (r.error || (r.status !== 0 && r.status !== 1)) {
    closeSync(fd);
    const why = r.error ? `flock(1) cannot run (${(r.error as NodeJS.ErrnoException).code ?? r.error.message}); it comes with util-linux` : String(r.stderr).trim();
    throw new Error(`cannot lock ${path}: ${why}`);
  }
  if (r.status === 1) {
    const owner = holderOf(fd);
    closeSync(fd);
    throw refuse(owner);
  }
  return fd;
}

/**
 * What the lock's holder wrote. It takes the lock, then writes: a refusal that lands between the
 * two finds the file empty, so it looks again for a moment (the write follows within
 * milliseconds) rather than name nobody. Bounded: the file is ours and small.
 */
function holderOf(fd: number): LockOwner | null {
  const read = () => {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return parseLock(buf.subarray(0, n).toString('utf8'));
  };
  const until = Date.now() + 500;
  let owner = read();
  // Stryker disable next-line EqualityOperator: the bound is a moment, not a contract
  while (!owner && Date.now() < until) {
    sleepSync(10);
    owner = read();
  }
  return owner;
}

/**
 * One `bench` per state directory (bench.lock, held until bench ends): each bench checks that no
 * run is live, then starts and stops its variants one after the other; two at once both passed
 * that check and then took turns between each other's variants. The holder's pid and bench id
 * are in the file, for the refusal.
 */
export async function acquireBenchLock(stateDir: string, benchId: string): Promise<{ release(): void }> {
  const path = join(stateDir, 'bench.lock');
  await prepareStateDir(stateDir);
  const fd = lockOrOwner(path, (owner) => new UserError(
    `another bench is running in ${stateDir}${owner ? `: bench ${owner.runId} (pid ${owner.pid})` : ''}; one bench per state directory (each starts and stops its own runs)`,
    owner ? `wait for it, or stop it: kill -INT ${owner.pid}` : 'wait for it to end',
  ));
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, JSON.stringify({ pid: process.pid, runId: benchId, createdAt: new Date().toISOString() } satisfies LockOwner), 0);
  } catch (err) {
    closeSync(fd);
    throw asDiskFull(err, path);
  }
  let open = true;
  return {
    release() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}
