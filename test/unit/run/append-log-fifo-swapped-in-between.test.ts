import { afterEach, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { tempHomes } from '../../helpers/cli.js';

// appendLine (src/run/supervisor-deps.ts) looks at the log, then opens it to write: a FIFO put there
// in between (or one it could not read, for a user without read permission) must get nothing and
// hold nothing. The first look is made to miss (as if the log were not there yet) to reach that moment.

const hidden = new Set<string>();
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const openSync = (path: unknown, flags?: unknown, mode?: unknown) => {
    if (typeof path === 'string' && hidden.has(path) && typeof flags === 'number' && (flags & fs.constants.O_WRONLY) === 0) {
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
    }
    return fs.openSync(path as string, flags as number, mode as number);
  };
  return { ...fs, openSync, default: { ...fs, openSync } };
});

const { realSupervisorDeps } = await import('../../../src/run/supervisor-deps.js');
const home = tempHomes('dd-append-swap-');
afterEach(() => hidden.clear());

describe('appendLog: a FIFO where the log is by the time it is written', () => {
  it('0, and the reader on the FIFO gets nothing', () => {
    const path = join(home().dir, 'agg-0.log');
    expect(spawnSync('mkfifo', [path]).status).toBe(0);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    hidden.add(path);
    try {
      expect(realSupervisorDeps().appendLog(path, 'mark')).toBe(0);
      const b = Buffer.alloc(64);
      let n = 0;
      try {
        n = readSync(reader, b, 0, 64, null);
      } catch (e) {
        expect((e as NodeJS.ErrnoException).code).toBe('EAGAIN');
      }
      expect(b.subarray(0, n).toString()).toBe('');
    } finally {
      closeSync(reader);
    }
  });
});
