import { describe, expect, it } from 'vitest';
import { parsePasswd, parseProcLocks, parseProcNetTcp, parseProcStat, parseUptime } from '../../../src/host/procs/parse-proc.js';

// /proc and /etc text at the edges of proc(5): a busy machine (two-digit slots and lock ids), a
// stat line cut at field 22, IPv6 listeners, and the passwd lines a real system has.
const STAT_TAIL = '0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 54175';

describe('/proc/PID/stat', () => {
  it('a line that ends at field 22 (start time) is whole enough; one field less is not', () => {
    expect(parseProcStat(`9740 (cat) R 9738 9738 2604 ${STAT_TAIL}`)).toMatchObject({ pid: 9740, startTicks: 54175 });
    expect(parseProcStat(`9740 (cat) R 9738 9738 2604 ${STAT_TAIL.replace(/ 54175$/, '')}`)).toBeNull();
  });

  it('any one of ppid, pgid and session not a number: not a stat line', () => {
    expect(parseProcStat(`9740 (cat) R x 9738 2604 ${STAT_TAIL}`)).toBeNull();
    expect(parseProcStat(`9740 (cat) R 9738 x 2604 ${STAT_TAIL}`)).toBeNull();
    expect(parseProcStat(`9740 (cat) R 9738 9738 x ${STAT_TAIL}`)).toBeNull();
    expect(parseProcStat(`9740 (cat) R 9738 9738 2604 ${STAT_TAIL.replace(/54175$/, 'x')}`)).toBeNull();
  });

  it('no comm in parentheses, or the pid missing: not a stat line', () => {
    expect(parseProcStat(`9740 cat R 9738 9738 2604 ${STAT_TAIL}`)).toBeNull();
    expect(parseProcStat(`9740 cat) R 9738 9738 2604 ${STAT_TAIL} (`)).toBeNull();
    expect(parseProcStat(`(cat) R 9738 9738 2604 ${STAT_TAIL}`)).toBeNull();
  });
});

describe('/proc/uptime', () => {
  it('a container that just started (0 s), and blanks before the number', () => {
    expect(parseUptime('0.00 0.00\n')).toBe(0);
    expect(parseUptime('  541.78 928.30\n')).toBe(541.78);
  });

  it('negative or infinite is no uptime', () => {
    expect(parseUptime('-1 0')).toBeNull();
    expect(parseUptime('Infinity 0')).toBeNull();
  });
});

describe('/proc/locks', () => {
  it('lock ids of two digits and more', () => {
    expect(parseProcLocks('12: FLOCK  ADVISORY  WRITE 48211 08:01:7864554 0 EOF\n').map((l) => [l.pid, l.inode])).toEqual([[48211, '7864554']]);
  });
});

describe('/etc/passwd', () => {
  it('a commented-out entry is no user; the first entry of a uid wins; three fields are enough', () => {
    const users = parsePasswd('#old:x:7:7::/:/bin/sh\nroot:x:0:0:root:/root:/bin/bash\ntoor:x:0:0::/root:/bin/sh\nsvc:x:5\n\n:x:9:9::/:/bin/sh\nbad:x:abc:1::/:/bin/sh\n');
    expect([...users.entries()]).toEqual([[0, 'root'], [5, 'svc']]);
  });
});

/** An IPv6 address as /proc/net/tcp6 prints it: each 32-bit word in host (little-endian) order. */
function tcp6Hex(groups: number[]): string {
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]);
  let hex = '';
  for (let w = 0; w < 16; w += 4) for (let b = 3; b >= 0; b--) hex += bytes[w + b].toString(16).padStart(2, '0').toUpperCase();
  return hex;
}
const listener = (sl: number, hex: string, port: number) =>
  `  ${sl}: ${hex}:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 ${50_000 + sl} 1 0000000000000000 100 0 0 10 0`;

describe('/proc/net/tcp6 addresses, written as RFC 5952 says', () => {
  it.each([
    [[0xfe80, 0, 0, 0, 0, 0, 0, 1], 'fe80::1'],
    [[0x2001, 0xdb8, 0, 0, 0, 0, 0, 1], '2001:db8::1'],
    [[0x2001, 0xdb8, 1, 2, 3, 4, 5, 6], '2001:db8:1:2:3:4:5:6'],
    [[0x2001, 0xdb8, 0, 1, 2, 3, 4, 5], '2001:db8:0:1:2:3:4:5'],
    [[0x2001, 0, 0, 1, 0, 0, 0, 1], '2001:0:0:1::1'],
    [[0x2001, 0xdb8, 0, 0, 1, 0, 0, 1], '2001:db8::1:0:0:1'],
    [[0x2001, 0xdb8, 0, 0, 0, 0xffff, 0x7f00, 1], '2001:db8::ffff:7f00:1'],
    [[0, 0, 0, 0, 0, 0, 0, 0x2001], '::2001'],
  ])('%j -> %s', (groups, text) => {
    expect(parseProcNetTcp(listener(0, tcp6Hex(groups), 8000))[0].address).toBe(text);
  });
});

describe('/proc/net/tcp lines', () => {
  it('slot numbers of two digits and more; a line cut right after the inode still counts', () => {
    const cut = '  12: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 88121';
    expect(parseProcNetTcp(`${listener(10, '0100007F', 8000)}\n${cut}`).map((l) => [l.address, l.port, l.inode])).toEqual([
      ['127.0.0.1', 8000, '50010'], ['127.0.0.1', 8081, '88121'],
    ]);
  });

  it('a line without the inode is not read', () => {
    expect(parseProcNetTcp('  12: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000')).toEqual([]);
  });
});
