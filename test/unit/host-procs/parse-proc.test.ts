import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  parseCmdline, parsePasswd, parseProcLocks, parseProcNetTcp, parseProcStat, parseUptime, splitDev,
} from '../../../src/host/procs/parse-proc.js';
import { SAMPLES } from '../../helpers/cli.js';

describe('parseProcStat', () => {
  it('reads ppid, pgid and start ticks from a real stat line', () => {
    const line = '9740 (cat) R 9738 9738 2604 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 54175 3133440 417 18446744073709551615 94336915369984 94336915389865 140727883456560 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n';
    expect(parseProcStat(line)).toEqual({ pid: 9740, comm: 'cat', state: 'R', ppid: 9738, pgid: 9738, session: 2604, startTicks: 54175 });
  });

  it('splits at the LAST parenthesis: the truncated vLLM title and a comm with ") (" in it', () => {
    const engine = '1309 (VLLM::EngineCor) S 1 1290 1290 0 -1 4194560 5230 0 12 0 310 95 0 0 20 0 48 0 812345 9876543210 123456 18446744073709551615 1 1 0 0 0 0 0 16781312 17442 0 0 0 17 3 0 0 0 0 0';
    expect(parseProcStat(engine)).toMatchObject({ pid: 1309, comm: 'VLLM::EngineCor', ppid: 1, pgid: 1290, startTicks: 812345 });
    const tricky = '4242 (evil) (S 1 2) S 77 4242 4242 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 999 1 1 18446744073709551615 0';
    expect(parseProcStat(tricky)).toMatchObject({ pid: 4242, comm: 'evil) (S 1 2', state: 'S', ppid: 77, pgid: 4242, startTicks: 999 });
  });

  it('returns null for a truncated line', () => {
    expect(parseProcStat('12 (x) S 1 2')).toBeNull();
    expect(parseProcStat('')).toBeNull();
  });
});

describe('parseProcLocks', () => {
  it('reads the sample: kind, pid and hex MAJOR:MINOR with decimal inode', () => {
    const locks = parseProcLocks(readFileSync(join(SAMPLES, 'proc', 'locks.txt'), 'utf8'));
    expect(locks).toHaveLength(3);
    expect(locks[0]).toMatchObject({ kind: 'POSIX', pid: 912, major: 0, minor: 0x1a, inode: '1042', blocked: false });
    expect(locks[1]).toMatchObject({ kind: 'FLOCK', access: 'WRITE', pid: 48211, major: 8, minor: 1, inode: '7864554' });
    expect(locks[2]).toMatchObject({ kind: 'FLOCK', pid: 1433, major: 0, minor: 0x19, inode: '811' });
  });

  it('marks waiters ("->") as blocked and reads hex device numbers above 9 (fd:01) and OFD locks', () => {
    const text = [
      '1: FLOCK  ADVISORY  WRITE 2001 fd:01:7864554 0 EOF',
      '1: -> FLOCK  ADVISORY  WRITE 2002 fd:01:7864554 0 EOF',
      '2: OFDLCK ADVISORY  READ  -1 00:2f:123 0 0',
      '3: LEASE  ACTIVE    READ  3003 103:02:18446744073709551000 0 EOF',
    ].join('\n');
    const locks = parseProcLocks(text);
    expect(locks.map((l) => [l.pid, l.blocked, l.major, l.minor])).toEqual([
      [2001, false, 0xfd, 1], [2002, true, 0xfd, 1], [-1, false, 0, 0x2f], [3003, false, 0x103, 2],
    ]);
    expect(locks[3].inode).toBe('18446744073709551000');
  });
});

describe('splitDev', () => {
  it('splits a Linux dev_t the glibc way', () => {
    expect(splitDev(0x801)).toEqual({ major: 8, minor: 1 }); // sda1
    expect(splitDev(0xfd01)).toEqual({ major: 253, minor: 1 }); // dm-1
    expect(splitDev(259n << 8n | 3n)).toEqual({ major: 259, minor: 3 }); // nvme0n1p3
    // A minor above 255 spills into bits 20-31 (makedev).
    const dev = (300n & 0xffn) | ((300n & ~0xffn) << 12n) | (8n << 8n);
    expect(splitDev(dev)).toEqual({ major: 8, minor: 300 });
  });
});

describe('parsePasswd', () => {
  it('maps uids to names, skipping comments and junk', () => {
    const users = parsePasswd('root:x:0:0:root:/root:/bin/bash\n# comment\nbroken\nalice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n');
    expect(users.get(0)).toBe('root');
    expect(users.get(1000)).toBe('alice');
    expect(users.size).toBe(2);
  });
});

describe('parseProcNetTcp', () => {
  it('keeps LISTEN sockets of /proc/net/tcp with decoded address, port and inode', () => {
    const text = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 493 1 0000000075e9f09e 100 0 0 10 0',
      '   1: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 88121 1 0000000000000000 100 0 0 10 0',
      '   2: 0100007F:9525 0100007F:BF1C 06 00000000:00000000 03:000002AA 00000000     0        0 0 3 00000000327b8b85',
    ].join('\n');
    expect(parseProcNetTcp(text)).toEqual([
      { address: '0.0.0.0', port: 8000, uid: 1000, inode: '493' },
      { address: '127.0.0.1', port: 8081, uid: 1000, inode: '88121' },
    ]);
  });

  it('decodes /proc/net/tcp6 addresses: ::, ::1 and v4-mapped', () => {
    const text = [
      '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 00000000000000000000000000000000:4E60 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 23456 1 0000000000000000 100 0 0 10 0',
      '   1: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 23457 1 0000000000000000 100 0 0 10 0',
      '   2: 0000000000000000FFFF00000100007F:4E61 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 23458 1 0000000000000000 100 0 0 10 0',
    ].join('\n');
    expect(parseProcNetTcp(text).map((l) => [l.address, l.port, l.inode])).toEqual([
      ['::', 20064, '23456'], ['::1', 8080, '23457'], ['::ffff:127.0.0.1', 20065, '23458'],
    ]);
  });
});

describe('small /proc readers', () => {
  it('parseUptime and parseCmdline', () => {
    expect(parseUptime('541.78 928.30\n')).toBe(541.78);
    expect(parseUptime('junk')).toBeNull();
    expect(parseCmdline('python3\0-m\0dynamo.frontend\0--http-port\x008000\0')).toBe('python3 -m dynamo.frontend --http-port 8000');
    expect(parseCmdline('VLLM::EngineCore\0\0\0\0')).toBe('VLLM::EngineCore');
    expect(parseCmdline('python3\0-c\0import os\nos.getpid()\0')).toBe('python3 -c import os os.getpid()');
  });
});
