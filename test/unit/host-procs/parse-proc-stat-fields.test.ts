import { describe, expect, it } from 'vitest';
import { parseProcStat } from '../../../src/host/procs/parse-proc.js';

// The hand-walked fields of /proc/PID/stat: exactly 22 fields are enough (starttime is field 22),
// 21 are not; runs of whitespace and a trailing newline change nothing.
describe('parseProcStat field walk', () => {
  const fields = (n: number) => Array.from({ length: n - 2 }, (_, i) => (i === 0 ? 'S' : String(i + 3))).join(' ');

  it('22 fields parse (starttime is the 22nd), 21 do not', () => {
    expect(parseProcStat(`7 (x) ${fields(22)}`)).toEqual({ pid: 7, comm: 'x', state: 'S', ppid: 4, pgid: 5, session: 6, startTicks: 22 });
    expect(parseProcStat(`7 (x) ${fields(21)}`)).toBeNull();
  });

  it('extra spaces, tabs and the trailing newline between fields are only separators', () => {
    expect(parseProcStat(`7 (a b)  S\t4  5 6 ${fields(22).split(' ').slice(4).join('  ')}\n`)).toMatchObject({ ppid: 4, pgid: 5, session: 6, startTicks: 22 });
  });

  it('a non-numeric ppid, group, session or start time makes the line unreadable (null), not NaN', () => {
    const f = fields(22).split(' ');
    for (const at of [1, 2, 3, 19]) {
      const bad = [...f];
      bad[at] = 'x';
      expect(parseProcStat(`7 (x) ${bad.join(' ')}`)).toBeNull();
    }
  });
});
