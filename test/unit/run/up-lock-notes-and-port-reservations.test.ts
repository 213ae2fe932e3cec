import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempHomes } from '../../helpers/cli.js';
import { acquireBenchLock, acquireUpLock, parseLock } from '../../../src/run/up-lock.js';
import { reservations, withPortsLock } from '../../../src/run/port-reservations.js';
import { UserError } from '../../../src/errors.js';

// What a starting `up` notes in its lock file (its run, then the ports it takes), what a second
// `up` or `bench` is told while it is held, and which notes another `up`'s port choice keeps off:
// only those of lock files held now (flock), named up.lock or up.NAME.lock, bounded, with ports.
// Locks are held by this test's own open files; the one POSIX lock is a python3 child of this test.

const home = tempHomes('dd-uplock-notes-');
const opened: number[] = [];
const children: ChildProcess[] = [];
const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
  opened.splice(0).forEach((fd) => closeSync(fd));
  children.splice(0).forEach((c) => c.stdin?.end()); // each exits when its stdin closes
});

/** A file written with `text`, flock-held (as another `up` would) when `held`. */
function lockFile(path: string, text: string, held: boolean): void {
  writeFileSync(path, text);
  if (!held) return;
  const fd = openSync(path, constants.O_RDWR);
  const r = spawnSync('flock', ['--nonblock', '--exclusive', '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
  expect(r.status).toBe(0);
  opened.push(fd);
}

const note = (runId: string, ports: number[]) => JSON.stringify({ pid: 4242, runId, createdAt: '2026-12-07T00:00:00Z', ports });

async function failure(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

describe('parseLock: the ports a note names', () => {
  it('keeps whole ports 1..65535, drops 0, 65536, fractions, negatives and strings', () => {
    expect(parseLock(JSON.stringify({ pid: 7, runId: 'r', ports: [0, 1, 65535, 65536, 1.5, -1, '80', 8000] }))).toEqual({ pid: 7, runId: 'r', createdAt: undefined, ports: [1, 65535, 8000] });
  });
  it('no usable port, or no list: no ports field at all', () => {
    expect(parseLock(JSON.stringify({ pid: 7, runId: 'r', ports: [0, 70000] }))).not.toHaveProperty('ports');
    expect(parseLock(JSON.stringify({ pid: 7, runId: 'r', ports: 8000 }))).not.toHaveProperty('ports');
    expect(parseLock(JSON.stringify({ pid: 7 }))).toEqual({ pid: 7, runId: '?', createdAt: undefined });
  });
});

describe('acquireUpLock: what the lock file says', () => {
  it('names the run and no ports until it reserves; then the ports, once each, in order; released, another up takes it', async () => {
    const h = home();
    const lock = await acquireUpLock(h.stateDir, 'run-a');
    const before = JSON.parse(readFileSync(lock.path, 'utf8'));
    expect(before).toMatchObject({ pid: process.pid, runId: 'run-a' });
    expect(before).not.toHaveProperty('ports');
    lock.reserve([8002, 8000, 10000, 8002, 9]);
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid, runId: 'run-a', ports: [9, 8000, 8002, 10000] });
    lock.describe('run-a-2');
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ runId: 'run-a-2', ports: [9, 8000, 8002, 10000] });
    lock.reserve([]);
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).not.toHaveProperty('ports');
    await lock.release();
    await lock.release(); // twice is harmless
    const again = await acquireUpLock(h.stateDir, 'run-b');
    await again.release();
  });

  it('a second up --name NAME is told the holder\'s run and pid, and the fix names the run', async () => {
    const h = home();
    const lock = await acquireUpLock(h.stateDir, 'run-a', 'left');
    try {
      const err = await failure(acquireUpLock(h.stateDir, 'run-b', 'left'));
      expect(err).toBeInstanceOf(UserError);
      expect(err.message).toBe(`another up --name left is running: run run-a (pid ${process.pid}); one up per state directory and name`);
      expect((err as UserError).fix).toBe('dynamo-dev teardown --run run-a   (or up --name NAME for a second run beside it)');
      // Another name is another lock.
      const other = await acquireUpLock(h.stateDir, 'run-c', 'right');
      await other.release();
    } finally {
      await lock.release();
    }
  });

  it('a named lock held by one that wrote nothing yet: "is starting", for that name', async () => {
    const h = home();
    mkdirSync(h.stateDir, { recursive: true });
    lockFile(join(h.stateDir, 'up.left.lock'), '', true);
    const err = await failure(acquireUpLock(h.stateDir, 'run-b', 'left'));
    expect(err.message).toBe('another up --name left is starting in this state directory; one up per state directory and name');
    expect((err as UserError).fix).toBe('wait for it, or up --name NAME for a second run beside it');
  });
});

describe('acquireBenchLock', () => {
  it('writes its holder; a second bench is told which bench and pid and how to stop it; released (twice), a later bench takes it', async () => {
    const h = home();
    const b = await acquireBenchLock(h.stateDir, 'bench-1');
    expect(parseLock(readFileSync(join(h.stateDir, 'bench.lock'), 'utf8'))).toMatchObject({ pid: process.pid, runId: 'bench-1' });
    const err = await failure(acquireBenchLock(h.stateDir, 'bench-2'));
    expect(err.message).toBe(`another bench is running in ${h.stateDir}: bench bench-1 (pid ${process.pid}); one bench per state directory (each starts and stops its own runs)`);
    expect((err as UserError).fix).toBe(`wait for it, or stop it: kill -INT ${process.pid}`);
    b.release();
    expect(() => b.release()).not.toThrow();
    const c = await acquireBenchLock(h.stateDir, 'bench-3');
    c.release();
  });

  it('a holder that wrote nothing: no bench named, "wait for it to end"', async () => {
    const h = home();
    mkdirSync(h.stateDir, { recursive: true });
    lockFile(join(h.stateDir, 'bench.lock'), '', true);
    const err = await failure(acquireBenchLock(h.stateDir, 'bench-2'));
    expect(err.message).toBe(`another bench is running in ${h.stateDir}; one bench per state directory (each starts and stops its own runs)`);
    expect((err as UserError).fix).toBe('wait for it to end');
  });
});

describe('reservations: the notes of runs starting now', () => {
  it('counts held up.lock and up.NAME.lock notes with ports; not its own, not an unheld (ended) one, not other names, not one without ports, not a huge one', () => {
    const h = home();
    const d = h.stateDir;
    mkdirSync(d, { recursive: true });
    lockFile(join(d, 'up.lock'), note('plain', [8000, 8001]), true);
    lockFile(join(d, 'up.left-side.lock'), note('named', [9000]), true);
    lockFile(join(d, 'up.mine.lock'), note('own', [7000]), true);
    lockFile(join(d, 'up.ended.lock'), note('ended', [7100]), false);
    lockFile(join(d, 'xup.lock'), note('x-prefix', [7200]), true);
    lockFile(join(d, 'up.lock.old'), note('suffix', [7300]), true);
    lockFile(join(d, 'up.noports.lock'), JSON.stringify({ pid: 5, runId: 'np' }), true);
    lockFile(join(d, 'up.huge.lock'), note('huge', [7400]) + ' '.repeat(70 * 1024), true);
    symlinkSync(join(d, 'nowhere'), join(d, 'up.dangling.lock'));
    const got = reservations(d, join(d, 'up.mine.lock')).sort((a, b) => a.runId.localeCompare(b.runId));
    expect(got).toEqual([
      { runId: 'named', name: 'left-side', pid: 4242, ports: [9000] },
      { runId: 'plain', name: null, pid: 4242, ports: [8000, 8001] },
    ]);
  });

  it('a note just under the bound still counts', () => {
    const d = home().stateDir;
    mkdirSync(d, { recursive: true });
    lockFile(join(d, 'up.big.lock'), note('big', [8100]) + ' '.repeat(60 * 1024), true);
    expect(reservations(d, join(d, 'up.lock'))).toEqual([{ runId: 'big', name: 'big', pid: 4242, ports: [8100] }]);
  });

  it('a POSIX (fcntl) lock is no up\'s flock: not counted', async () => {
    const d = home().stateDir;
    mkdirSync(d, { recursive: true });
    const path = join(d, 'up.posix.lock');
    writeFileSync(path, note('posix', [8200]));
    const c = spawn('python3', ['-c', 'import fcntl,sys\nf=open(sys.argv[1],"r+")\nfcntl.lockf(f,fcntl.LOCK_EX)\nprint("held",flush=True)\nsys.stdin.read()', path], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(c);
    await new Promise<void>((resolve, reject) => {
      c.stdout!.once('data', () => resolve());
      c.once('exit', (code) => reject(new Error(`python3 exited ${code}`)));
    });
    expect(reservations(d, join(d, 'up.lock'))).toEqual([]);
  });

  it('no state directory: none', () => {
    expect(reservations(join(home().stateDir, 'absent'), 'x')).toEqual([]);
  });
});

describe('withPortsLock', () => {
  it('runs the choice holding ports.lock and returns its value; the lock is free after', async () => {
    const d = home().stateDir;
    mkdirSync(d, { recursive: true });
    expect(await withPortsLock(d, async () => 42, 1)).toBe(42);
    expect(await withPortsLock(d, async () => 'again')).toBe('again');
  });

  it('held by another for the whole wait: a UserError saying how long and which file; nothing run', async () => {
    const d = home().stateDir;
    mkdirSync(d, { recursive: true });
    lockFile(join(d, 'ports.lock'), '', true);
    let ran = false;
    const err = await failure(withPortsLock(d, async () => { ran = true; }, 1));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(`another up has been choosing its ports in ${d} for 1 s (${join(d, 'ports.lock')} is held); nothing started`);
    expect((err as UserError).fix).toBe(`try again in a moment; if it stays held, see who holds it: fuser -v ${join(d, 'ports.lock')}`);
    expect(ran).toBe(false);
  });

  it('ports.lock a symlink: refused naming the file and the cause, never followed', async () => {
    const d = home().stateDir;
    mkdirSync(d, { recursive: true });
    symlinkSync(join(d, 'elsewhere'), join(d, 'ports.lock'));
    const err = await failure(withPortsLock(d, async () => 1));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(`${join(d, 'ports.lock')}: cannot open the ports lock (ELOOP)`);
  });

  it('no flock(1), or one that fails otherwise: the cause, not a wait', async () => {
    const d = home().stateDir;
    mkdirSync(d, { recursive: true });
    const bin = mkdtempSync(join(d, 'bin-'));
    process.env.PATH = bin;
    let err = await failure(withPortsLock(d, async () => 1));
    expect(err.message).toBe(`cannot lock ${join(d, 'ports.lock')}: flock(1) cannot run (ENOENT); it comes with util-linux`);
    writeFileSync(join(bin, 'flock'), '#!/bin/sh\nexit 3\n');
    chmodSync(join(bin, 'flock'), 0o755);
    err = await failure(withPortsLock(d, async () => 1));
    expect(err).not.toBeInstanceOf(UserError);
    expect(err.message).toBe(`cannot lock ${join(d, 'ports.lock')}: flock exited 3`);
  });
});
