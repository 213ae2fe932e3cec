import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { collectStatus } from '../../../src/run/status-doc.js';
import { findRunView, listRunViews, writeRun } from '../../../src/run/state.js';
import { tempHome } from '../../helpers/cli.js';
import { deadPid, killStarted, spawnTree, writeFakeRun } from '../../helpers/proc-trees.js';

// status, doctor and up read the live runs and the recent ones without reading a state
// directory's whole history: the live index (live/<id>) lists the runs that may be live.

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-live-');
  homes.push(h);
  return h;
};
const fifos: string[] = [];
afterEach(() => {
  killStarted();
  // A reader blocked on a poisoned record (the test failed) gets EOF and frees its thread.
  for (const f of fifos.splice(0)) {
    try {
      closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch { /* nobody reading: fine */ }
  }
});
afterAll(() => homes.forEach((h) => h.cleanup()));

const liveDir = (stateDir: string) => join(stateDir, 'live');

/** `n` ended runs, one a minute from 10:00, ids sorting by time as `up` makes them. */
async function endedRuns(stateDir: string, n: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < from + n; i++) {
    const mm = String(i).padStart(2, '0');
    const id = `20261130-10${mm}00-agg`;
    ids.push(id);
    await writeFakeRun(stateDir, { id, createdAt: `2026-11-30T10:${mm}:00Z`, state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
  }
  return ids;
}

/** A run started long ago whose worker still lives (its supervisor is gone: orphaned). */
async function oldLiveRun(stateDir: string) {
  const w = await spawnTree('honour');
  await writeFakeRun(stateDir, {
    id: '20261130-090000-agg', createdAt: '2026-11-30T09:00:00Z', state: 'ready', supervisor: { pid: deadPid(), startTicks: 1 },
    processes: [{ name: 'agg-0', pid: w.pid, startTicks: w.startTicks }],
  });
  return w;
}

/** A run.json that blocks whoever opens it (a FIFO without writer): reading it would hang status. */
function poisonRecord(stateDir: string, id: string): void {
  const path = join(stateDir, 'runs', id, 'run.json');
  rmSync(path);
  execFileSync('mkfifo', [path]);
  fifos.push(path);
}

describe('the live index', () => {
  it('status shows a live run however old, plus the 5 newest, without reading the records in between', async () => {
    const h = home();
    await oldLiveRun(h.stateDir);
    const ids = await endedRuns(h.stateDir, 12);
    // Runs 1..7 are neither live nor among the 5 newest: status must not even open them.
    poisonRecord(h.stateDir, ids[3]);
    const docs = await collectStatus(h.stateDir, {});
    expect(docs.map((d) => [d.id, d.state])).toEqual([
      ...ids.slice(7).reverse().map((id) => [id, 'stopped']),
      ['20261130-090000-agg', 'orphaned'],
    ]);
  });

  it('an unreadable record among the newest is skipped and the next one taken, as before', async () => {
    const h = home();
    const ids = await endedRuns(h.stateDir, 7);
    writeFileSync(join(h.stateDir, 'runs', ids[6], 'run.json'), '{"id": "broken');
    expect((await collectStatus(h.stateDir, {})).map((d) => d.id)).toEqual(ids.slice(1, 6).reverse());
  });

  it('a run is listed from its first record on; a reader that finds it dead takes it off, a live one stays', async () => {
    const h = home();
    const w = await oldLiveRun(h.stateDir);
    await endedRuns(h.stateDir, 1);
    await writeFakeRun(h.stateDir, {
      id: '20261130-095000-agg', createdAt: '2026-11-30T09:50:00Z', state: 'ready', supervisor: { pid: deadPid(), startTicks: 1 },
      processes: [{ name: 'agg-0', pid: deadPid(), startTicks: 5 }],
    });
    expect(readdirSync(liveDir(h.stateDir)).sort()).toEqual(['20261130-090000-agg', '20261130-095000-agg']);
    const view = await findRunView(h.stateDir);
    expect(view?.record.id).toBe('20261130-090000-agg');
    expect(view?.pids).toContain(w.pid);
    // The dead one is off the index; the live one (and the stopped one, never listed) as they were.
    expect(readdirSync(liveDir(h.stateDir))).toEqual(['20261130-090000-agg']);
  });

  it('a final state keeps the run listed until a reader finds it dead (processes may have survived the stop)', async () => {
    const h = home();
    const rec = await writeFakeRun(h.stateDir, { id: 'r', state: 'starting', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    await writeRun(h.stateDir, { ...rec, state: 'failed' });
    expect(readdirSync(liveDir(h.stateDir))).toEqual(['r']);
    await listRunViews(h.stateDir);
    expect(readdirSync(liveDir(h.stateDir))).toEqual([]);
  });

  it('a state directory written before the index: every record is read once, and the index is built', async () => {
    const h = home();
    await oldLiveRun(h.stateDir);
    await endedRuns(h.stateDir, 7);
    rmSync(liveDir(h.stateDir), { recursive: true });
    const docs = await collectStatus(h.stateDir, {});
    expect(docs.map((d) => d.id)).toContain('20261130-090000-agg');
    expect(readdirSync(liveDir(h.stateDir))).toEqual(['20261130-090000-agg']);
  });

  it('no runs: status lists none and creates nothing in the state directory', async () => {
    const h = home();
    expect(await collectStatus(h.stateDir, {})).toEqual([]);
    expect(existsSync(h.stateDir)).toBe(false);
  });
});
