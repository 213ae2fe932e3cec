import { describe, expect, it } from 'vitest';
import { findMarked, type MarkerReader } from '../../../src/run/run-scan.js';
import type { ProcStat } from '../../../src/run/proc.js';

// The run-marker search on a busy machine: thousands of processes older than the run are passed
// over on their start time (free from the scan), without a stat of /proc/PID or a read of their
// environment; only the newer ones of our uid have their environment read.
const st = (pid: number, startTicks: number): ProcStat => ({ pid, comm: 'x', state: 'S', ppid: 1, pgid: pid, session: pid, startTicks });

describe('findMarked cost', () => {
  it('3,000 processes older than the run: no uid looked up, no environment read; the run\'s newer processes are', () => {
    const old = Array.from({ length: 3000 }, (_, i) => st(10_000 + i, 400));
    const run = [st(20_000, 500), st(20_001, 501), st(20_002, 502)];
    const uids: number[] = [];
    const environs: number[] = [];
    const reader: MarkerReader = {
      uidOf: (pid) => (uids.push(pid), pid === 20_002 ? 0 : 1000),
      environ: (pid) => (environs.push(pid), 'DYNAMO_DEV_RUN=/s/runs/r1\0'),
    };
    const found = findMarked([...old, ...run], { uid: 1000, minTicks: 500, known: new Set(), wanted: new Set(['/s/runs/r1']), selfPid: 1 }, reader);
    expect([...found.keys()]).toEqual([20_000, 20_001]);
    expect(uids).toEqual([20_000, 20_001, 20_002]);
    expect(environs).toEqual([20_000, 20_001]); // another user's process: its environment is never read
  });
});
