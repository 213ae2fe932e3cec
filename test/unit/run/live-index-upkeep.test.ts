import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempHome } from '../../helpers/cli.js';
import { deadPid, writeFakeRun } from '../../helpers/proc-trees.js';
import { listRuns, listRunViews, liveAndRecentViews, readRun, writeRun, writeRunSync } from '../../../src/run/state.js';
import { UserError } from '../../../src/errors.js';
import type { RunRecord } from '../../../src/run/types.js';

// The live index (live/<id>, state.ts) as status sees it: every run written in a state that may
// be live is listed, by the supervisor's synchronous writes as by the async ones; a listing reads
// the listed runs and exactly the `recent` newest; the index is built for an old state directory
// and never for an empty one. Every run here is dead (pids of finished children): nothing is signalled.

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-upkeep-');
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach((h) => h.cleanup()));

const liveDir = (stateDir: string) => join(stateDir, 'live');
const listed = (stateDir: string) => readdirSync(liveDir(stateDir)).sort();
const dead = () => ({ pid: deadPid(), startTicks: 1 });

/** `n` runs one minute apart from 10:00 (ids sort by time, as up makes them), in `state`. */
async function runs(stateDir: string, n: number, state: RunRecord['state'] = 'stopped', from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < from + n; i++) {
    const mm = String(i).padStart(2, '0');
    const id = `20261130-10${mm}00-agg`;
    ids.push(id);
    await writeFakeRun(stateDir, { id, createdAt: `2026-11-30T10:${mm}:00Z`, state, supervisor: dead(), processes: [] });
  }
  return ids;
}

describe("the supervisor's synchronous writes", () => {
  it('list every run they write as possibly live, each with an empty marker; a run written stopped or failed is not listed', async () => {
    const h = home();
    const [a] = await runs(h.stateDir, 1, 'stopped', 0);
    const [b] = await runs(h.stateDir, 1, 'stopped', 1);
    const [c, d] = await runs(h.stateDir, 2, 'stopped', 2);
    const recA = await readRun(h.stateDir, a);
    writeRunSync(h.stateDir, { ...recA, state: 'starting' });
    writeRunSync(h.stateDir, { ...(await readRun(h.stateDir, b)), state: 'ready' });
    writeRunSync(h.stateDir, { ...(await readRun(h.stateDir, c)), state: 'failed' });
    writeRunSync(h.stateDir, { ...(await readRun(h.stateDir, d)), state: 'stopped' });
    expect(listed(h.stateDir)).toEqual([a, b]);
    expect(statSync(join(liveDir(h.stateDir), a)).size).toBe(0);
    // What was written is the record read back.
    expect(await readRun(h.stateDir, a)).toEqual({ ...recA, state: 'starting' });
  });

  it('a marker planted as a symlink to a file is never truncated (sync and async writes append nothing)', async () => {
    const h = home();
    const [a, b] = await runs(h.stateDir, 2);
    mkdirSync(liveDir(h.stateDir), { recursive: true });
    const precious = join(h.dir, 'precious');
    writeFileSync(precious, 'data');
    symlinkSync(precious, join(liveDir(h.stateDir), a));
    symlinkSync(precious, join(liveDir(h.stateDir), b));
    writeRunSync(h.stateDir, { ...(await readRun(h.stateDir, a)), state: 'starting' });
    await writeRun(h.stateDir, { ...(await readRun(h.stateDir, b)), state: 'starting' });
    expect(readFileSync(precious, 'utf8')).toBe('data');
  });

  it("after a run's first live write, its later writes do not touch the index: a live/ replaced meanwhile never stops the record being written", async () => {
    const h = home();
    const [a, b] = await runs(h.stateDir, 2);
    writeRunSync(h.stateDir, { ...(await readRun(h.stateDir, a)), state: 'starting' });
    await writeRun(h.stateDir, { ...(await readRun(h.stateDir, b)), state: 'starting' });
    rmSync(liveDir(h.stateDir), { recursive: true });
    writeFileSync(liveDir(h.stateDir), 'not a folder');
    const recA = await readRun(h.stateDir, a);
    const recB = await readRun(h.stateDir, b);
    expect(() => writeRunSync(h.stateDir, { ...recA, state: 'ready' })).not.toThrow();
    await expect(writeRun(h.stateDir, { ...recB, state: 'ready' })).resolves.toBeUndefined();
    expect((await readRun(h.stateDir, a)).state).toBe('ready');
    expect((await readRun(h.stateDir, b)).state).toBe('ready');
  });
});

describe('a run a reader took off the index', () => {
  it('is listed again when this process writes it as live again', async () => {
    const h = home();
    const [a] = await runs(h.stateDir, 1, 'starting');
    expect(listed(h.stateDir)).toEqual([a]);
    await listRunViews(h.stateDir); // its supervisor is dead: off the index
    expect(listed(h.stateDir)).toEqual([]);
    await writeRun(h.stateDir, { ...(await readRun(h.stateDir, a)), state: 'starting' });
    expect(listed(h.stateDir)).toEqual([a]);
  });
});

describe('building the index', () => {
  it('a history of ended runs without an index gets one, private to the user, on its first read', async () => {
    const h = home();
    await runs(h.stateDir, 3);
    expect(existsSync(liveDir(h.stateDir))).toBe(false);
    expect(await listRunViews(h.stateDir)).toHaveLength(3);
    expect(listed(h.stateDir)).toEqual([]);
    expect(statSync(liveDir(h.stateDir)).mode & 0o777).toBe(0o700);
  });

  it('a runs folder with no run in it: a reader creates no index', async () => {
    const h = home();
    mkdirSync(join(h.stateDir, 'runs'), { recursive: true, mode: 0o700 });
    expect(await listRunViews(h.stateDir)).toEqual([]);
    expect(await liveAndRecentViews(h.stateDir, 5)).toEqual([]);
    expect(readdirSync(h.stateDir)).toEqual(['runs']);
  });
});

describe('status without --all (the listed runs and the `recent` newest)', () => {
  it('reads exactly the `recent` newest ended runs plus every listed one, newest first', async () => {
    const h = home();
    const [old] = await runs(h.stateDir, 1, 'ready', 0); // listed, its supervisor dead
    const ended = await runs(h.stateDir, 5, 'stopped', 1);
    const views = await liveAndRecentViews(h.stateDir, 2);
    expect(views.map((v) => v.record.id)).toEqual([ended[4], ended[3], old]);
  });

  it('fewer runs than `recent`: all of them, nothing made up', async () => {
    const h = home();
    const [a] = await runs(h.stateDir, 1, 'ready', 0);
    const [b] = await runs(h.stateDir, 1, 'stopped', 1);
    const views = await liveAndRecentViews(h.stateDir, 5);
    expect(views.map((v) => v.record.id)).toEqual([b, a]);
  });
});

describe('a state directory others may write', () => {
  it('is refused by status with and without --all, and by a plain listing, even when it has an index', async () => {
    const h = home();
    await runs(h.stateDir, 2, 'ready');
    expect(listed(h.stateDir)).toHaveLength(2);
    chmodSync(h.stateDir, 0o777);
    for (const read of [() => liveAndRecentViews(h.stateDir, 5), () => listRunViews(h.stateDir), () => listRuns(h.stateDir)]) {
      const err = await read().then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).message).toMatch(/the state directory is writable by everyone \(mode 0777\)/);
    }
  });
});
