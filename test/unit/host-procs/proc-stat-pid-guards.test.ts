import { describe, expect, it } from 'vitest';
import { parseProcStat } from '../../../src/host/procs/parse-proc.js';

// The pid of a /proc/PID/stat text is what stop and teardown signal: a text whose pid is not a
// plain number, or whose comm never closes, must read as no process at all. kill(-1) signals every
// process the user may signal, kill(0) our own group; a NaN pid matches nothing we started.
const TAIL = 'S 1 2 3 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 54175';

describe('/proc/PID/stat pid guards', () => {
  it('a well-formed line gives its pid (the control for the cases below)', () => {
    expect(parseProcStat(`9740 (cat) ${TAIL}`)).toMatchObject({ pid: 9740, ppid: 1, pgid: 2, session: 3, startTicks: 54175 });
  });

  it('a pid of -1 is no process (signalling -1 reaches every process of the user)', () => {
    expect(parseProcStat(`-1 (cat) ${TAIL}`)).toBeNull();
  });

  it('a pid with anything after its digits is no process, not NaN', () => {
    expect(parseProcStat(`9740x (cat) ${TAIL}`)).toBeNull();
    expect(parseProcStat(`97 40 (cat) ${TAIL}`)).toBeNull();
  });

  it('a comm that never closes is no process, even when 20 numbers follow', () => {
    // Without the ')' the fields would be counted from the pid itself: ppid 1, pgid 2, session 3.
    expect(parseProcStat(`9740( 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20`)).toBeNull();
  });
});
