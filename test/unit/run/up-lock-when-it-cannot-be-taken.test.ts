import { chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { tempHome } from '../../helpers/cli.js';
import { acquireUpLock } from '../../../src/run/state.js';
import { acquireBenchLock } from '../../../src/run/up-lock.js';
import { UserError } from '../../../src/errors.js';

// What a second `up` (or an `up` on a machine without a working flock(1)) is told: the holder's
// run when its lock file names one, "starting" when the file says nothing yet, and the real cause
// when the lock cannot be taken at all. Nothing here starts a process that outlives its call.

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-uplock-');
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach((h) => h.cleanup()));

const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

async function failure(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

/** Holds up.lock the way another `up` would (flock on its own open file), leaving the file as it is. */
function holdLock(path: string): () => void {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
  const r = spawnSync('flock', ['--nonblock', '--exclusive', '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
  expect(r.status).toBe(0);
  return () => closeSync(fd);
}

describe('a held lock', () => {
  it('whose file says nothing yet (its up is still starting): says another up is starting, and to wait', async () => {
    const h = home();
    mkdirSync(h.stateDir, { mode: 0o700 });
    const release = holdLock(join(h.stateDir, 'up.lock'));
    try {
      const err = await failure(acquireUpLock(h.stateDir, 'mine'));
      expect(err).toBeInstanceOf(UserError);
      expect(err.message).toBe('another up is starting in this state directory; one up per state directory unless each run has a name');
      expect((err as UserError).fix).toBe('wait for it, or up --name NAME for a second run beside it');
    } finally {
      release();
    }
  });

  it('whose holder writes its name a moment after taking the lock (two benches started together): the refusal still names it', async () => {
    const h = home();
    mkdirSync(h.stateDir, { mode: 0o700 });
    const path = join(h.stateDir, 'bench.lock');
    const release = holdLock(path);
    // Another process writes, as the holder does right after its flock; the refusal, which reads
    // synchronously, must see it (CI once printed "another bench is running" naming nobody).
    const writer = spawn('sh', ['-c', `sleep 0.1; printf '%s' '{"pid":4242,"runId":"20261207-140000-000-bench"}' > "${path}"`], { stdio: 'ignore' });
    try {
      const err = await failure(acquireBenchLock(h.stateDir, 'mine'));
      expect(err.message).toBe(`another bench is running in ${h.stateDir}: bench 20261207-140000-000-bench (pid 4242); one bench per state directory (each starts and stops its own runs)`);
      expect((err as UserError).fix).toBe('wait for it, or stop it: kill -INT 4242');
    } finally {
      release();
      await new Promise((r) => (writer.exitCode === null ? writer.once('exit', r) : r(null)));
    }
  });

  it('whose file names its run: the fix is to tear that run down (or use another state directory)', async () => {
    const h = home();
    const first = await acquireUpLock(h.stateDir, '20261201-101500-agg');
    try {
      const err = await failure(acquireUpLock(h.stateDir, 'mine'));
      expect((err as UserError).fix).toBe('dynamo-dev teardown --run 20261201-101500-agg   (or up --name NAME for a second run beside it)');
    } finally {
      await first.release();
    }
  });
});

describe('a lock that cannot be taken at all', () => {
  it('up.lock planted as a symlink is never followed: refused naming the file and the errno', async () => {
    const h = home();
    mkdirSync(h.stateDir, { mode: 0o700 });
    const target = join(h.dir, 'elsewhere');
    writeFileSync(target, 'keep me');
    symlinkSync(target, join(h.stateDir, 'up.lock'));
    const err = await failure(acquireUpLock(h.stateDir, 'mine'));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(`${join(h.stateDir, 'up.lock')}: cannot open the lock (ELOOP)`);
    expect(readFileSync(target, 'utf8')).toBe('keep me');
  });

  it('up.lock or bench.lock planted as a FIFO: one line naming the file, no hang, the FIFO left where it is', async () => {
    const h = home();
    mkdirSync(h.stateDir, { mode: 0o700 });
    for (const [file, take] of [['up.lock', () => acquireUpLock(h.stateDir, 'mine')], ['bench.lock', () => acquireBenchLock(h.stateDir, 'mine')]] as const) {
      const path = join(h.stateDir, file);
      execFileSync('mkfifo', [path]);
      const err = await failure(take());
      expect(err).toBeInstanceOf(UserError);
      expect(err.message).toBe(`${path}: not a regular file, so not our lock; nothing was started`);
      expect((err as UserError).fix).toBe(`move it away (it is not ours to remove), then run the command again: mv ${path} ${path}.moved`);
      expect(lstatSync(path).isFIFO()).toBe(true);
    }
  });

  it('without flock(1) on the PATH: says it cannot run and where it comes from', async () => {
    const h = home();
    const empty = join(h.dir, 'empty-bin');
    mkdirSync(empty);
    process.env.PATH = empty;
    const err = await failure(acquireUpLock(h.stateDir, 'mine'));
    expect(err.message).toBe(`cannot lock ${join(h.stateDir, 'up.lock')}: flock(1) cannot run (ENOENT); it comes with util-linux`);
  });

  it('flock(1) failing otherwise (neither taken nor held): its own words, and no lock is taken', async () => {
    const h = home();
    const bin = join(h.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'flock'), '#!/bin/sh\necho "flock: 3: Bad file descriptor  " >&2\nexit 64\n');
    chmodSync(join(bin, 'flock'), 0o755);
    process.env.PATH = `${bin}:${savedPath}`;
    const err = await failure(acquireUpLock(h.stateDir, 'mine'));
    expect(err).not.toBeInstanceOf(UserError);
    expect(err.message).toBe(`cannot lock ${join(h.stateDir, 'up.lock')}: flock: 3: Bad file descriptor`);
    // Nothing was described: the file does not claim a run.
    expect(readFileSync(join(h.stateDir, 'up.lock'), 'utf8')).toBe('');
  });
});

describe('releasing', () => {
  it('twice is harmless (the second release closes nothing), and the next up gets the lock', async () => {
    const h = home();
    const lock = await acquireUpLock(h.stateDir, 'a');
    await lock.release();
    await expect(lock.release()).resolves.toBeUndefined();
    const next = await acquireUpLock(h.stateDir, 'b');
    await next.release();
  });
});
