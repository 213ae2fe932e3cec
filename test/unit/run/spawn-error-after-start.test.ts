import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Node reports some failures of a child that did start (a signal it could not send) as an 'error'
// event on it. Such an error must not turn a started process into one that "cannot start": the run
// waits for its real exit. The real spawn is wrapped only to get hold of the child object.

const children = vi.hoisted(() => [] as ChildProcess[]);
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  return {
    ...real,
    spawn: (...args: Parameters<typeof real.spawn>) => {
      const c = real.spawn(...args);
      children.push(c);
      return c;
    },
  };
});
const { spawnLogged } = await import('../../../src/run/spawn.js');

const dirs: string[] = [];
afterEach(() => {
  children.length = 0;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('spawnLogged: an error event from a child that did start', () => {
  it('the exit info is its real exit, and the log does not say it cannot start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dd-spawn-err-'));
    dirs.push(dir);
    const log = join(dir, 'agg-0.log');
    const s = spawnLogged(['sh', '-c', 'echo up; exit 3'], { PATH: process.env.PATH }, log);
    expect(s.pid).toBeGreaterThan(0);
    children[0].emit('error', Object.assign(new Error('kill EPERM'), { code: 'EPERM' }));
    expect(await s.exited).toEqual({ code: 3, signal: null, error: null });
    expect(readFileSync(log, 'utf8')).toBe('up\n');
  });
});
