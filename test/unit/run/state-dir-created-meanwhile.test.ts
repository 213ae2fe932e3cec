import * as realFs from 'node:fs/promises';
import { mkdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { tempHome } from '../../helpers/cli.js';
import { checkStateDir, prepareStateDir } from '../../../src/run/state-dir.js';
import { UserError } from '../../../src/errors.js';

// `up` creates the state directory and its runs/ when missing. Another up (or another user) may
// create either at the same moment: the folder is then judged as it is found, trusted or refused
// with its own name. A state directory that cannot be created or read says why, with the errno.
// The race is played by making mkdir find the folder made just before it (`meanwhile`).

let meanwhile: { path: string; make: (path: string) => Promise<void> } | null = null;
vi.mock('node:fs/promises', async (importOriginal) => {
  const orig = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...orig,
    mkdir: async (path: string, opts?: Parameters<typeof orig.mkdir>[1]) => {
      const hook = meanwhile?.path === path ? meanwhile : null;
      if (hook) meanwhile = null;
      if (hook) await hook.make(path);
      return orig.mkdir(path, opts);
    },
  };
});

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-sdrace-');
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach((h) => h.cleanup()));
afterEach(() => {
  meanwhile = null;
});

async function userError(p: Promise<unknown>): Promise<UserError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(UserError);
  return err as UserError;
}

/** Another process creates `path` (with `mode`) just before our mkdir of it. */
const createdBySomeoneElse = (path: string, mode: number) => ({
  path,
  make: async () => {
    await realFs.mkdir(path, { recursive: true });
    await realFs.chmod(path, mode);
  },
});

describe('runs/ created by someone else at the same moment', () => {
  it('privately: this up goes on with it', async () => {
    const h = home();
    mkdirSync(h.stateDir, { mode: 0o700 });
    meanwhile = createdBySomeoneElse(join(h.stateDir, 'runs'), 0o700);
    await prepareStateDir(h.stateDir);
    expect(meanwhile).toBeNull(); // the other process did create it first
    expect(statSync(join(h.stateDir, 'runs')).isDirectory()).toBe(true);
    expect(await checkStateDir(h.stateDir)).toBe(true);
  });

  it('writable by everyone: refused naming the runs folder', async () => {
    const h = home();
    mkdirSync(h.stateDir, { mode: 0o700 });
    meanwhile = createdBySomeoneElse(join(h.stateDir, 'runs'), 0o777);
    const err = await userError(prepareStateDir(h.stateDir));
    expect(err.message).toMatch(new RegExp(`^${join(h.stateDir, 'runs')}: the runs folder is writable by everyone \\(mode 0777\\)`));
  });
});

describe('the state directory created by someone else at the same moment', () => {
  it('writable by everyone: refused naming the state directory', async () => {
    const h = home();
    meanwhile = createdBySomeoneElse(h.stateDir, 0o777);
    const err = await userError(prepareStateDir(h.stateDir));
    expect(err.message).toMatch(new RegExp(`^${h.stateDir}: the state directory is writable by everyone \\(mode 0777\\)`));
  });
});

describe('a state directory that cannot be created or read', () => {
  it('a symlink to a folder that does not exist (an unmounted disk): cannot be created, with the errno and a way out', async () => {
    const h = home();
    symlinkSync(join(h.dir, 'unmounted', 'state'), h.stateDir);
    const err = await userError(prepareStateDir(h.stateDir));
    expect(err.message).toBe(`${h.stateDir}: cannot create the state directory (ENOENT)`);
    expect(err.fix).toBe('choose a writable one with --state-dir');
  });

  it('a symlink loop: cannot be read, with the errno (not taken for a file in the path)', async () => {
    const h = home();
    symlinkSync(h.stateDir, h.stateDir);
    for (const p of [checkStateDir(h.stateDir), prepareStateDir(h.stateDir)]) {
      const err = await userError(p);
      expect(err.message).toBe(`${h.stateDir}: cannot read the state directory (ELOOP)`);
    }
    rmSync(h.stateDir);
  });
});
