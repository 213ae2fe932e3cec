import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempHome } from '../../helpers/cli.js';
import { deadPid, writeFakeRun } from '../../helpers/proc-trees.js';
import {
  createRunDir, onRecordWarning, parseLock, readRun, removeEmptyRunDir, runStatus, runsOfPaths, sortRuns, writeRun, writeRunSync,
} from '../../../src/run/state.js';
import { UserError } from '../../../src/errors.js';
import type { RunRecord } from '../../../src/run/types.js';

// run.json and the run folders as the user meets them through --run, status and diagnose: which
// ids are refused, what a bad or missing record says, which runs count as live, what a folder of
// an unstarted run leaves behind.

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-records-');
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach((h) => h.cleanup()));

const dead = () => ({ pid: deadPid(), startTicks: 1 });

async function userError(p: Promise<unknown>): Promise<UserError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(UserError);
  return err as UserError;
}

describe('--run ids', () => {
  it('an empty id, a path (either slash) or a dot folder is refused before anything is read, with what an id looks like', async () => {
    const { stateDir } = home();
    for (const id of ['', 'a/b', 'a\\b', '.', '..']) {
      const err = await userError(readRun(stateDir, id));
      expect(err.message).toBe(`--run: "${id}" is not a run id (ids look like 20261130-101500-agg)`);
      expect(err.fix).toBe('dynamo-dev status --all');
    }
  });

  it('dots inside an id are fine', async () => {
    const { stateDir } = home();
    await writeFakeRun(stateDir, { id: 'a..b', supervisor: dead(), processes: [], state: 'stopped' });
    expect((await readRun(stateDir, 'a..b')).id).toBe('a..b');
  });

  it('a record is never written under a refused id', async () => {
    const { stateDir } = home();
    const rec = { id: '..', state: 'stopped' } as RunRecord;
    await expect(writeRun(stateDir, rec)).rejects.toBeInstanceOf(UserError);
    expect(() => writeRunSync(stateDir, rec)).toThrow(UserError);
    expect(existsSync(join(stateDir, 'run.json'))).toBe(false);
  });
});

describe('a run that is not there or not readable', () => {
  it('no runs at all: says so and how to start one', async () => {
    const { stateDir } = home();
    const err = await userError(readRun(stateDir, 'nope'));
    expect(err.message).toBe(`--run: no run "nope": no runs are recorded in ${stateDir}`);
    expect(err.fix).toBe('dynamo-dev up [RECIPE]');
  });

  it('an unknown id lists the 5 most recent runs, newest first, and points at status --all', async () => {
    const { stateDir } = home();
    for (let i = 1; i <= 7; i++) await writeFakeRun(stateDir, { id: `2026113${i}-100000-agg`.slice(0, 19), createdAt: `2026-11-0${i}T10:00:00Z`, state: 'stopped', supervisor: dead(), processes: [] });
    const err = await userError(readRun(stateDir, 'nope'));
    const ids = Array.from({ length: 5 }, (_, i) => `2026113${7 - i}-100000-agg`.slice(0, 19));
    expect(err.message).toBe(`--run: no run "nope" in ${stateDir}; recent runs: ${ids.join(', ')}`);
    expect(err.fix).toBe('dynamo-dev status --all');
  });

  it('a run.json that is a folder, or far too large, is named with the reason (never read whole)', async () => {
    const { stateDir } = home();
    await writeFakeRun(stateDir, { id: 'r1', supervisor: dead(), processes: [], state: 'stopped' });
    const path = join(stateDir, 'runs', 'r1', 'run.json');
    rmSync(path);
    mkdirSync(path);
    expect((await userError(readRun(stateDir, 'r1'))).message).toBe(`--run r1: ${path} is not a valid run record: not a regular file`);
    rmSync(path, { recursive: true });
    writeFileSync(path, '');
    truncateSync(path, 6 * 1024 * 1024 + 1);
    expect((await userError(readRun(stateDir, 'r1'))).message).toBe(`--run r1: ${path} is not a valid run record: 6 MiB is too large for a run record`);
  });

  it('a record of exactly the largest size allowed is read (and judged on its content)', async () => {
    const { stateDir } = home();
    await writeFakeRun(stateDir, { id: 'r1', supervisor: dead(), processes: [], state: 'stopped' });
    const path = join(stateDir, 'runs', 'r1', 'run.json');
    writeFileSync(path, ' '.repeat(4 * 1024 * 1024));
    expect((await userError(readRun(stateDir, 'r1'))).message).toMatch(/is not a valid run record: not JSON/);
  });

  it('a run folder whose path runs through a file is "no such run", not an error about the file', async () => {
    const { stateDir } = home();
    await writeFakeRun(stateDir, { id: 'r0', supervisor: dead(), processes: [], state: 'stopped' });
    writeFileSync(join(stateDir, 'runs', 'r1'), 'a file where a run folder would be');
    const warnings: string[] = [];
    onRecordWarning((w) => warnings.push(w));
    expect((await userError(readRun(stateDir, 'r1'))).message).toBe(`--run: no run "r1" in ${stateDir}; recent runs: r0`);
    expect(warnings).toEqual([]);
  });
});

describe('what a record says about a run nothing is left of', () => {
  const rec = (state: RunRecord['state']) => ({ state, supervisor: { pid: 1, startTicks: 1, detached: false } }) as RunRecord;
  it('recorded stopping, nothing alive: stopped (the stop finished after the last write)', () => {
    expect(runStatus(rec('stopping'), { supervisor: false, processes: false })).toBe('stopped');
  });
  it('recorded failed while its supervisor still lives (stopping what is left): failed', () => {
    expect(runStatus(rec('failed'), { supervisor: true, processes: true })).toBe('failed');
    expect(runStatus(rec('failed'), { supervisor: true, processes: false })).toBe('failed');
  });
  it('a supervisor alive with a run still starting: as recorded, whatever is lost', () => {
    expect(runStatus(rec('starting'), { supervisor: true, processes: false, lost: 0 })).toBe('starting');
  });
  it('a record without supervisor details and live processes: orphaned, never ready', () => {
    expect(runStatus({ state: 'ready' } as RunRecord, { supervisor: false, processes: true })).toBe('orphaned');
  });
});

describe('the order of runs', () => {
  const r = (id: string, createdAt?: string) => ({ id, createdAt }) as RunRecord;
  it('newest first by creation time; the same time (or none) by id, newest first', () => {
    expect(sortRuns([r('a', '2026-11-30T09:00:00Z'), r('c', '2026-11-30T10:00:00Z'), r('b', '2026-11-30T10:00:00Z')]).map((x) => x.id)).toEqual(['c', 'b', 'a']);
    expect(sortRuns([r('x1'), r('x3'), r('x2')]).map((x) => x.id)).toEqual(['x3', 'x2', 'x1']);
    expect(sortRuns([r('z'), r('a', '2026-11-30T09:00:00Z')]).map((x) => x.id)).toEqual(['a', 'z']);
  });
});

describe('run folders', () => {
  it('a state directory without its runs folder: a clear error naming the folder and the reason', () => {
    const { dir } = home();
    let err: unknown = null;
    try {
      createRunDir(join(dir, 'no-state'), 'r1');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toBe(`${join(dir, 'no-state', 'runs', 'r1')}: cannot create the run folder (ENOENT)`);
  });

  it('when the id and 99 suffixes are all taken: says so and where to clean up', () => {
    const { stateDir } = home();
    mkdirSync(join(stateDir, 'runs'), { recursive: true });
    mkdirSync(join(stateDir, 'runs', 'r1'));
    for (let n = 2; n <= 100; n++) mkdirSync(join(stateDir, 'runs', `r1-${n}`));
    expect(() => createRunDir(stateDir, 'r1')).toThrow(`${join(stateDir, 'runs', 'r1')}: that run id and 99 suffixes are taken; clean up ${join(stateDir, 'runs')}`);
    rmSync(join(stateDir, 'runs', 'r1-100'), { recursive: true });
    expect(createRunDir(stateDir, 'r1')).toBe('r1-100');
  });

  it('removing an unstarted run never removes a log with content (nor its folder)', () => {
    const { stateDir } = home();
    mkdirSync(join(stateDir, 'runs'), { recursive: true });
    const id = createRunDir(stateDir, 'r1');
    writeFileSync(join(stateDir, 'runs', id, 'logs', 'agg-0.log'), 'Traceback ...\n');
    removeEmptyRunDir(stateDir, id);
    expect(readdirSync(join(stateDir, 'runs', id)).sort()).toEqual(['discovery', 'logs']);
    expect(existsSync(join(stateDir, 'runs', id, 'logs', 'agg-0.log'))).toBe(true);
  });
});

describe('the live index', () => {
  it('a record written as starting is listed as possibly live; one written stopped or failed is not', async () => {
    const { stateDir } = home();
    await writeFakeRun(stateDir, { id: 'r-live', state: 'starting', supervisor: dead(), processes: [] });
    await writeFakeRun(stateDir, { id: 'r-stopped', state: 'stopped', supervisor: dead(), processes: [] });
    await writeFakeRun(stateDir, { id: 'r-failed', state: 'failed', supervisor: dead(), processes: [] });
    writeRunSync(stateDir, { ...(await readRun(stateDir, 'r-live')), id: 'r-sync-live' });
    writeRunSync(stateDir, { ...(await readRun(stateDir, 'r-live')), id: 'r-sync-failed', state: 'failed' });
    expect(readdirSync(join(stateDir, 'live')).sort()).toEqual(['r-live', 'r-sync-live']);
    // Written whole: no temporary file is left beside any record.
    for (const id of ['r-live', 'r-sync-live']) expect(readdirSync(join(stateDir, 'runs', id)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('the up lock file', () => {
  it('a pid that is 0, negative or not whole says nothing; a missing run id is shown as ?', () => {
    expect(parseLock('{"pid":0,"runId":"r"}')).toBeNull();
    expect(parseLock('{"pid":-5,"runId":"r"}')).toBeNull();
    expect(parseLock('{"pid":1.5,"runId":"r"}')).toBeNull();
    expect(parseLock('{"pid":"12","runId":"r"}')).toBeNull();
    expect(parseLock('{"pid":1}')).toEqual({ pid: 1, runId: '?', createdAt: undefined });
    expect(parseLock('{"pid":42,"runId":"r1","createdAt":"2026-12-01T10:00:00Z"}')).toEqual({ pid: 42, runId: 'r1', createdAt: '2026-12-01T10:00:00Z' });
  });
});

describe('which runs log paths belong to (diagnose counting a run\'s exits)', () => {
  it('a run folder or its logs folder means the whole run; log files name their processes; anything else is skipped', async () => {
    const { stateDir, dir } = home();
    await writeFakeRun(stateDir, { id: 'r1', supervisor: dead(), processes: [], state: 'stopped' });
    await writeFakeRun(stateDir, { id: 'r2', supervisor: dead(), processes: [], state: 'stopped' });
    await writeFakeRun(stateDir, { id: 'r3', supervisor: dead(), processes: [], state: 'stopped' });
    const logs = (id: string) => join(stateDir, 'runs', id, 'logs');
    mkdirSync(join(stateDir, 'runs', 'no-record', 'logs'), { recursive: true });
    const found = await runsOfPaths([
      join(logs('r1'), 'agg-0.log'), join(logs('r1'), 'agg-1.log'),
      logs('r2'),
      join(stateDir, 'runs', 'r3'), join(logs('r3'), 'agg-0.log'),
      join(dir, 'elsewhere', 'agg-0.log'), join(stateDir, 'runs', 'no-record', 'logs', 'x.log'), join(dir, 'logs'),
    ]);
    const by = Object.fromEntries(found.map((f) => [f.record.id, f.only === null ? null : [...f.only].sort()]));
    expect(by).toEqual({ r1: [join(logs('r1'), 'agg-0.log'), join(logs('r1'), 'agg-1.log')], r2: null, r3: null });
    expect(found.every((f) => f.stateDir === stateDir)).toBe(true);
  });
});

describe('the run a command reads by default (logs, diagnose)', () => {
  it('--run: that run; else the latest recorded; none recorded: says so, naming what is missing, and how to start one', async () => {
    const { pickRun } = await import('../../../src/run/pick-run.js');
    const { stateDir } = home();
    const err = await userError(pickRun(stateDir, undefined, 'logs'));
    expect(err.message).toBe(`no runs recorded in ${stateDir}, so no logs`);
    expect(err.fix).toBe('dynamo-dev up [RECIPE]');
    await writeFakeRun(stateDir, { id: 'r-old', createdAt: '2026-11-30T09:00:00Z', state: 'stopped', supervisor: dead(), processes: [] });
    await writeFakeRun(stateDir, { id: 'r-new', createdAt: '2026-11-30T10:00:00Z', state: 'stopped', supervisor: dead(), processes: [] });
    expect((await pickRun(stateDir, undefined, 'logs')).id).toBe('r-new');
    expect((await pickRun(stateDir, 'r-old', 'logs')).id).toBe('r-old');
  });
});
