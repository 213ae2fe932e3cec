import { describe, expect, it } from 'vitest';
import { stateDirProblem } from '../../../src/run/state-dir.js';

// Issue 12, causes 2 and 12: which state directories may be trusted (pure rule; the e2e tests
// play it with a second user).

const dir = (uid: number, mode: number) => ({ isDirectory: () => true, uid, mode: 0o40000 | mode });
const file = { isDirectory: () => false, uid: 1000, mode: 0o100644 };

describe('stateDirProblem', () => {
  it('a directory of the user (or root) that only its owner may write is trusted', () => {
    expect(stateDirProblem('/s', dir(1000, 0o700), 1000)).toBeNull();
    expect(stateDirProblem('/s', dir(1000, 0o755), 1000)).toBeNull();
    expect(stateDirProblem('/s', dir(0, 0o755), 1000)).toBeNull();
    expect(stateDirProblem('/s', dir(1000, 0o555), 1000)).toBeNull(); // read-only is not a trust problem
  });
  it('a file is an input error naming it', () => {
    expect(stateDirProblem('/s', file, 1000)).toBe('/s: the state directory is a file, not a folder; move it away or choose another with --state-dir');
  });
  it('another user\'s directory, or one its group or everyone may write, is refused', () => {
    expect(stateDirProblem('/s', dir(1001, 0o700), 1000)).toMatch(/^\/s: the state directory belongs to uid 1001, not to you \(uid 1000\)/);
    expect(stateDirProblem('/s', dir(1000, 0o777), 1000)).toMatch(/writable by everyone \(mode 0777\)/);
    expect(stateDirProblem('/tmp', dir(0, 0o1777), 1000)).toMatch(/writable by everyone \(mode 1777\)/);
    expect(stateDirProblem('/s/runs', dir(1000, 0o775), 1000, 'runs folder')).toMatch(/^\/s\/runs: the runs folder is writable by its group \(mode 0775\)/);
  });
});
