import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { tempHome } from '../../helpers/cli.js';
import { deadPid, writeFakeRun } from '../../helpers/proc-trees.js';
import { findMarked, livenessIn, markerIn, scanRuns, type MarkerReader, type RunsScan } from '../../../src/run/run-scan.js';
import { readStartTicks, type ProcStat } from '../../../src/run/proc.js';
import type { RunRecord } from '../../../src/run/types.js';

// Whose processes a record may claim (only ours: a record naming another user's process names a
// stranger), what the marker search reads (nothing when there is nothing to look for; each owner
// once), and the marker parsing and pid edges. The readers are injected and count what they are
// asked; the only real process named is this test process, which nothing signals.

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-owners-');
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach((h) => h.cleanup()));

const realGetuid = process.getuid;
afterEach(() => {
  process.getuid = realGetuid;
});

const st = (pid: number, startTicks: number): ProcStat => ({ pid, comm: 'x', state: 'S', ppid: 1, pgid: pid, session: pid, startTicks });
const ourStart = readStartTicks(process.pid)!;

/** A reader that says every process belongs to `uid`, has no marker, and counts what it is asked. */
function countingReader(uid: number) {
  const uids: number[] = [];
  const environs: number[] = [];
  const reader: MarkerReader = {
    uidOf: (pid) => (uids.push(pid), uid),
    environ: (pid) => (environs.push(pid), 'PATH=/usr/bin\0'),
  };
  return { reader, uids, environs };
}

/** A ready run whose worker is this test process (its supervisor is dead). */
async function runNamingUs(stateDir: string, id: string, state: RunRecord['state'] = 'ready'): Promise<RunRecord> {
  return writeFakeRun(stateDir, {
    id, state, supervisor: { pid: deadPid(), startTicks: ourStart }, processes: [{ name: 'agg-0', pid: process.pid, startTicks: ourStart }],
  });
}

describe('the run marker in an environment block', () => {
  it('a long environment without it has no marker (a value is never cut out of another variable)', () => {
    expect(markerIn('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin\0HOME=/root\0')).toBeNull();
  });
});

describe('whose processes a record may claim', () => {
  it("a record naming another user's process (a reused pid) claims nothing: not alive, no pids", async () => {
    const h = home();
    const rec = await runNamingUs(h.stateDir, 'r1');
    const { reader } = countingReader(4321);
    const rs = await scanRuns(h.stateDir, [rec], reader);
    expect(rs.ours(process.pid)).toBe(false);
    expect(livenessIn(h.stateDir, rec, rs)).toMatchObject({ processes: false, pids: [] });
  });

  it('our own process: claimed, and its owner is looked up once however many records name it', async () => {
    const h = home();
    const a = await runNamingUs(h.stateDir, 'r1');
    const b = await runNamingUs(h.stateDir, 'r2');
    const { reader, uids } = countingReader(process.getuid!());
    const rs = await scanRuns(h.stateDir, [a, b], reader);
    expect(livenessIn(h.stateDir, a, rs).pids).toEqual([process.pid]);
    expect(livenessIn(h.stateDir, b, rs).pids).toEqual([process.pid]);
    expect(uids.filter((pid) => pid === process.pid)).toHaveLength(1);
  });

  it('a scan holding only the stranger still drops it', () => {
    const rec = { id: 'r1', state: 'ready', bootId: null, supervisor: { pid: 50, startTicks: 40, detached: false }, processes: [{
      name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 1000, startedAt: null, argv: [], env: {}, ports: {}, gpuMemoryUtilization: null,
      state: 'ready', kvTokens: null, exitCode: null, signal: null, log: '/x.log', descendants: [],
    }] } as unknown as RunRecord;
    const rs: RunsScan = { scan: [st(100, 1000)], bootId: null, marks: new Map(), ours: () => false };
    expect(livenessIn('/s', rec, rs)).toMatchObject({ processes: false, pids: [] });
  });

  it('where the platform has no uids: every process a record names counts, and no environment is searched', async () => {
    const h = home();
    const rec = await runNamingUs(h.stateDir, 'r1');
    const { reader, uids, environs } = countingReader(4321);
    (process as { getuid?: unknown }).getuid = undefined;
    const rs = await scanRuns(h.stateDir, [rec], reader);
    process.getuid = realGetuid;
    expect(livenessIn(h.stateDir, rec, rs).pids).toEqual([process.pid]);
    expect([uids, environs]).toEqual([[], []]);
  });
});

describe('what the marker search reads', () => {
  it('nothing when there is no uid to match or no run to look for', () => {
    const scan = [st(100, 600), st(101, 700)];
    for (const q of [
      { uid: null, wanted: new Set(['/s/runs/r1']) },
      { uid: 1000, wanted: new Set<string>() },
    ]) {
      const { reader, uids, environs } = countingReader(1000);
      expect(findMarked(scan, { ...q, minTicks: 0, known: new Set(), selfPid: 1 }, reader).size).toBe(0);
      expect([uids, environs]).toEqual([[], []]);
    }
  });

  it('nothing when every run is recorded stopped or failed: no process of the machine is asked about', async () => {
    const h = home();
    const recs = [await runNamingUs(h.stateDir, 'r1', 'stopped'), await runNamingUs(h.stateDir, 'r2', 'failed')];
    const { reader, uids, environs } = countingReader(process.getuid!());
    const rs = await scanRuns(h.stateDir, recs, reader);
    expect(rs.marks.size).toBe(0);
    expect([uids, environs]).toEqual([[], []]);
  });

  it('never pid 1 (init), even of our uid, started after the run and carrying its marker', () => {
    const reader: MarkerReader = { uidOf: () => 1000, environ: () => 'DYNAMO_DEV_RUN=/s/runs/r1\0' };
    const found = findMarked([st(1, 600), st(2, 600)], { uid: 1000, minTicks: 500, known: new Set(), wanted: new Set(['/s/runs/r1']), selfPid: 999 }, reader);
    expect([...found.keys()]).toEqual([2]);
  });
});
