import { describe, expect, it } from 'vitest';
import { parseProcLocks } from '../../../src/host/procs/parse-proc.js';

// Since Linux 5.14 /proc/locks prints waiters as a tree: each level one blank further in before
// its "-> " (fs/locks.c lock_get_status: `"%lld: "`, then the prefix right-aligned in a field
// `repeat - 1 + strlen("-> ")` wide). Three workers queueing for one exclusive download lock make
// a chain: the second waiter waits behind the first, so its line reads "1:  -> FLOCK".
const CHAIN = [
  '1: FLOCK  ADVISORY  WRITE 48211 08:01:7864554 0 EOF',
  '1: -> FLOCK  ADVISORY  WRITE 48300 08:01:7864554 0 EOF',
  '1:  -> FLOCK  ADVISORY  WRITE 48377 08:01:7864554 0 EOF',
  '1:   -> FLOCK  ADVISORY  WRITE 48412 08:01:7864554 0 EOF',
  '2: POSIX  ADVISORY  READ  912 00:1a:1042 0 EOF',
  '',
].join('\n');

describe('/proc/locks waiter chains', () => {
  it('every waiter of a chain is read, at any depth, as waiting (not holding) for the same inode', () => {
    expect(parseProcLocks(CHAIN).map((l) => [l.pid, l.blocked, l.kind, l.access, l.inode])).toEqual([
      [48211, false, 'FLOCK', 'WRITE', '7864554'],
      [48300, true, 'FLOCK', 'WRITE', '7864554'],
      [48377, true, 'FLOCK', 'WRITE', '7864554'],
      [48412, true, 'FLOCK', 'WRITE', '7864554'],
      [912, false, 'POSIX', 'READ', '1042'],
    ]);
  });
});
