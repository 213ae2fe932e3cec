import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempHome } from '../../helpers/cli.js';
import { deadPid, writeFakeRun } from '../../helpers/proc-trees.js';
import { acquireUpLock, findRunView, judgeLock, listRuns, parseLock, readRun, runStatus } from '../../../src/run/state.js';
import { readStartTicks } from '../../../src/run/proc.js';
import { UserError } from '../../../src/errors.js';
import type { RunRecord } from '../../../src/run/types.js';

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-state-');
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach((h) => h.cleanup()));

const rec = (state: RunRecord['state'], detached = false) => ({ state, supervisor: { pid: 1, startTicks: 1, detached } }) as RunRecord;

describe('runStatus', () => {
  const cases: [RunRecord['state'], boolean, boolean, boolean, string][] = [
    // state, detached, supervisor alive, processes alive -> status
    ['starting', false, true, true, 'starting'],
    ['ready', false, true, true, 'ready'],
    ['stopping', false, true, true, 'stopped'],
    ['ready', false, false, true, 'orphaned'], // supervisor SIGKILLed, processes live on
    ['starting', false, false, true, 'orphaned'],
    ['ready', true, false, true, 'ready'], // up --detach: supervisor gone by design
    ['starting', true, false, true, 'orphaned'], // a detached up dies before ready
    ['stopped', false, false, true, 'orphaned'], // recorded stopped, yet something lives
    ['stopped', false, false, false, 'stopped'],
    ['failed', false, false, false, 'failed'],
    ['ready', false, false, false, 'failed'], // everything died and no one noted why
    ['ready', true, false, false, 'failed'],
  ];
  it.each(cases)('%s (detached %s), supervisor %s, processes %s -> %s', (state, detached, supervisor, processes, want) => {
    expect(runStatus(rec(state, detached), { supervisor, processes })).toBe(want);
  });
});

describe('lock takeover rules', () => {
  it('parseLock: valid JSON with a pid; anything else is unreadable', () => {
    expect(parseLock('{"pid":42,"startTicks":7,"runId":"r"}')).toMatchObject({ pid: 42, startTicks: 7, runId: 'r' });
    expect(parseLock('')).toBeNull();
    expect(parseLock('{"pid":"x"}')).toBeNull();
  });
  it('judgeLock: held only while the owner is the same live process', () => {
    const ticks = (m: Record<number, number>) => (pid: number) => m[pid] ?? null;
    expect(judgeLock({ pid: 42, startTicks: 7, runId: 'r' }, ticks({ 42: 7 }))).toBe('held');
    expect(judgeLock({ pid: 42, startTicks: 7, runId: 'r' }, ticks({}))).toBe('stale'); // owner gone
    expect(judgeLock({ pid: 42, startTicks: 7, runId: 'r' }, ticks({ 42: 9 }))).toBe('stale'); // pid reused
    expect(judgeLock({ pid: 42, startTicks: null, runId: 'r' }, ticks({ 42: 9 }))).toBe('held'); // cannot tell: be safe
    expect(judgeLock(null, ticks({}))).toBe('stale');
  });
});

describe('acquireUpLock', () => {
  it('one up per state dir: a second acquire while the first owner lives names its run and pid', async () => {
    const h = home();
    const lock = await acquireUpLock(h.stateDir, 'run-a');
    const content = JSON.parse(readFileSync(join(h.stateDir, 'up.lock'), 'utf8'));
    expect(content).toMatchObject({ pid: process.pid, startTicks: readStartTicks(process.pid), runId: 'run-a' });
    const err = await acquireUpLock(h.stateDir, 'run-b').catch((e) => e);
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(`another up is running: run run-a (pid ${process.pid}); one up per state directory`);
    await lock.release();
    expect(existsSync(join(h.stateDir, 'up.lock'))).toBe(false);
    const again = await acquireUpLock(h.stateDir, 'run-b');
    await again.release();
    expect(readdirSync(h.stateDir)).toEqual(['runs']); // no tmp files left behind
  });

  it('takes over a stale lock whose owner is gone (or whose pid was reused)', async () => {
    const h = home();
    mkdirSync(h.stateDir, { recursive: true });
    writeFileSync(join(h.stateDir, 'up.lock'), JSON.stringify({ pid: deadPid(), startTicks: 123, runId: 'old' }));
    const lock = await acquireUpLock(h.stateDir, 'new');
    expect(JSON.parse(readFileSync(join(h.stateDir, 'up.lock'), 'utf8')).runId).toBe('new');
    await lock.release();
    writeFileSync(join(h.stateDir, 'up.lock'), JSON.stringify({ pid: process.pid, startTicks: 1, runId: 'reused' }));
    const lock2 = await acquireUpLock(h.stateDir, 'new2');
    await lock2.release();
  });

  it('release never removes a lock someone else took meanwhile', async () => {
    const h = home();
    const lock = await acquireUpLock(h.stateDir, 'mine');
    writeFileSync(join(h.stateDir, 'up.lock'), JSON.stringify({ pid: 1, startTicks: readStartTicks(1), runId: 'theirs' }));
    await lock.release();
    expect(JSON.parse(readFileSync(join(h.stateDir, 'up.lock'), 'utf8')).runId).toBe('theirs');
  });
});

describe('run records', () => {
  it('writeRun/readRun round-trip; listRuns newest first, unreadable skipped; unknown id lists recent ones', async () => {
    const h = home();
    await writeFakeRun(h.stateDir, { id: '20261130-090000-agg', createdAt: '2026-11-30T09:00:00Z', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    await writeFakeRun(h.stateDir, { id: '20261130-100000-agg', createdAt: '2026-11-30T10:00:00Z', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    mkdirSync(join(h.stateDir, 'runs', 'broken'), { recursive: true });
    writeFileSync(join(h.stateDir, 'runs', 'broken', 'run.json'), 'not json');
    expect((await listRuns(h.stateDir)).map((r) => r.id)).toEqual(['20261130-100000-agg', '20261130-090000-agg']);
    expect((await readRun(h.stateDir, '20261130-090000-agg')).createdAt).toBe('2026-11-30T09:00:00Z');
    await expect(readRun(h.stateDir, 'nope')).rejects.toThrow(/no run "nope" in .*recent runs: 20261130-100000-agg, 20261130-090000-agg/);
    await expect(readRun(h.stateDir, '../x')).rejects.toBeInstanceOf(UserError);
    expect(readdirSync(join(h.stateDir, 'runs', '20261130-100000-agg'))).toEqual(['logs', 'run.json']); // atomic write left no tmp
  });

  it('findRunView: null without runs; prefers the live run over a newer dead one; live pids listed', async () => {
    const h = home();
    expect(await findRunView(h.stateDir)).toBeNull();
    await writeFakeRun(h.stateDir, {
      id: 'a-live', createdAt: '2026-11-30T09:00:00Z', supervisor: { pid: process.pid, startTicks: readStartTicks(process.pid) }, processes: [],
    });
    await writeFakeRun(h.stateDir, { id: 'b-dead', createdAt: '2026-11-30T10:00:00Z', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    const v = await findRunView(h.stateDir);
    expect(v).toMatchObject({ status: 'ready', live: true, pids: [process.pid], logsDir: join(h.stateDir, 'runs', 'a-live', 'logs') });
    expect(v!.record.id).toBe('a-live');
    expect((await findRunView(h.stateDir, 'b-dead'))).toMatchObject({ status: 'stopped', live: false, pids: [] });
  });
});
