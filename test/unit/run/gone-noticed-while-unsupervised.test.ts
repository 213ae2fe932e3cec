import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempHome } from '../../helpers/cli.js';
import { deadPid, writeFakeRun } from '../../helpers/proc-trees.js';
import { findRunView, judgeRun, readRun, writeRun } from '../../../src/run/state.js';
import { readStartTicks, type ProcStat } from '../../../src/run/proc.js';
import type { RunsScan } from '../../../src/run/run-scan.js';

// Exit codes are known only to a process's parent. When a run's supervisor is gone (a detached
// run whose supervisor was killed), the first command that finds one of its processes gone writes
// that down ("gone, noticed at"); while the supervisor lives it records exits itself and a reader
// writes nothing; a record that changed since it was read is never overwritten with older news.
// The scans are built by hand (pids no process has): nothing is signalled.

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-gone-');
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach((h) => h.cleanup()));

const SUP = 4_000_001;
const W0 = 4_000_010;
const W1 = 4_000_020;
const stat = (pid: number, startTicks: number): ProcStat => ({ pid, comm: 'python3', state: 'S', ppid: 1, pgid: pid, session: pid, startTicks });
const scanOf = (scan: ProcStat[]): RunsScan => ({ scan, bootId: null, marks: new Map(), ours: () => true });

/** A ready run of two workers, as its (detached) supervisor last wrote it. */
async function twoWorkers(stateDir: string, id = '20261201-101500-agg') {
  return writeFakeRun(stateDir, {
    id, state: 'ready', createdAt: '2026-12-01T10:15:00.000Z', supervisor: { pid: SUP, startTicks: 50, detached: true },
    processes: [{ name: 'agg-0', pid: W0, startTicks: 100 }, { name: 'agg-1', pid: W1, startTicks: 100 }],
  });
}

describe('a run whose supervisor is gone', () => {
  it('the first reader records the worker that vanished as gone, noticed now, and the run as degraded', async () => {
    const h = home();
    const rec = await twoWorkers(h.stateDir);
    const before = Date.now();
    const j = await judgeRun(h.stateDir, rec, scanOf([stat(W0, 100)]));
    expect(j.status).toBe('degraded');
    expect(j.lost.map((l) => [l.name, l.how, l.noticed])).toEqual([['agg-1', 'gone', true]]);
    const onDisk = await readRun(h.stateDir, rec.id);
    expect(onDisk.state).toBe('degraded');
    expect(onDisk.processes.map((p) => p.state)).toEqual(['ready', 'gone']);
    const noticed = Date.parse(onDisk.processes[1].noticedGoneAt!);
    expect(noticed).toBeGreaterThanOrEqual(before - 1);
    expect(noticed).toBeLessThanOrEqual(Date.now());
    expect(j.record).toEqual(onDisk);
    expect(j.lost[0].at).toBe(onDisk.processes[1].noticedGoneAt);
  });

  it('a record its writer changed since it was read is not overwritten: the newer one is what the reader reports', async () => {
    const h = home();
    const seen = await twoWorkers(h.stateDir);
    const newer = { ...seen, updatedAt: '2026-12-01T10:20:00.000Z', frontendUrl: 'http://127.0.0.1:8001' };
    await writeRun(h.stateDir, newer);
    const j = await judgeRun(h.stateDir, seen, scanOf([stat(W0, 100)]));
    expect(await readRun(h.stateDir, seen.id)).toEqual(newer);
    expect(j.record).toEqual(newer);
  });
});

describe('a run whose supervisor lives', () => {
  it('a reader writes nothing (the supervisor records exits itself) and still reports the loss', async () => {
    const h = home();
    const rec = await twoWorkers(h.stateDir);
    const j = await judgeRun(h.stateDir, rec, scanOf([stat(SUP, 50), stat(W0, 100)]));
    expect(await readRun(h.stateDir, rec.id)).toEqual(rec);
    expect(j.lost.map((l) => [l.name, l.how, l.at])).toEqual([['agg-1', 'gone', null]]);
    expect(j.status).toBe('degraded');
  });
});

describe('findRunView with --run', () => {
  it('judges that run against the processes alive now', async () => {
    const h = home();
    // Its supervisor is this test process (alive, and certainly ours); its worker is dead.
    const rec = await writeFakeRun(h.stateDir, {
      id: 'r-live', state: 'starting', supervisor: { pid: process.pid, startTicks: readStartTicks(process.pid) },
      processes: [{ name: 'agg-0', pid: deadPid(), startTicks: 1, state: 'starting' }],
    });
    const view = await findRunView(h.stateDir, rec.id);
    expect(view?.live).toBe(true);
    expect(view?.status).toBe('starting');
    expect(view?.pids).toEqual([process.pid]);
    expect(view?.logsDir).toBe(join(h.stateDir, 'runs', 'r-live', 'logs'));
  });
});
