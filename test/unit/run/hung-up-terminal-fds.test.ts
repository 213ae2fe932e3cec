import { beforeEach, describe, expect, it, vi } from 'vitest';

// releaseLostTerminal() runs at the very end of `up` after the terminal hung up: Node 20 would
// abort (SIGABRT) restoring the mode of a dead TTY at exit. It must close exactly the character
// devices among stdin, stdout and stderr and keep pipes and files (a `| tee` still gets its
// output). node:fs is faked here: closing the test runner's own stdio is not an option.

const fake = vi.hoisted(() => ({
  kinds: new Map<number, 'tty' | 'pipe' | 'closed'>(),
  closed: [] as number[],
  closeFails: new Set<number>(),
}));

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    fstatSync: (fd: number) => {
      const k = fake.kinds.get(fd) ?? 'closed';
      if (k === 'closed') throw Object.assign(new Error('EBADF: bad file descriptor, fstat'), { code: 'EBADF' });
      return { isCharacterDevice: () => k === 'tty' };
    },
    closeSync: (fd: number) => {
      fake.closed.push(fd);
      if (fake.closeFails.has(fd)) throw Object.assign(new Error('EBADF: bad file descriptor, close'), { code: 'EBADF' });
    },
  };
});

const { releaseLostTerminal } = await import('../../../src/run/terminal.js');

beforeEach(() => {
  fake.kinds.clear();
  fake.closed.length = 0;
  fake.closeFails.clear();
});

describe('releaseLostTerminal: what is closed after a hang-up', () => {
  it('all three stdio fds on the lost terminal: each is closed', () => {
    for (const fd of [0, 1, 2]) fake.kinds.set(fd, 'tty');
    releaseLostTerminal();
    expect(fake.closed).toEqual([0, 1, 2]);
  });

  it('stdout piped to tee is kept; stdin and stderr on the terminal are closed', () => {
    fake.kinds.set(0, 'tty').set(1, 'pipe').set(2, 'tty');
    releaseLostTerminal();
    expect(fake.closed).toEqual([0, 2]);
  });

  it('an fd already closed, or one whose close fails, does not stop the others from being closed', () => {
    fake.kinds.set(1, 'tty').set(2, 'tty'); // 0 already closed
    fake.closeFails.add(1);
    expect(() => releaseLostTerminal()).not.toThrow();
    expect(fake.closed).toEqual([1, 2]);
  });

  it('nothing on a terminal (all pipes and files): nothing is closed', () => {
    for (const fd of [0, 1, 2]) fake.kinds.set(fd, 'pipe');
    releaseLostTerminal();
    expect(fake.closed).toEqual([]);
  });
});
