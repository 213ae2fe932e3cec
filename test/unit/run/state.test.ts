import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempHome } from '../../helpers/cli.js';
import { deadPid, waitUntil, writeFakeRun } from '../../helpers/proc-trees.js';
import { acquireUpLock, createRunDir, findRunView, listRuns, onRecordWarning, parseLock, readRun, removeEmptyRunDir, runStatus } from '../../../src/run/state.js';
import { newRunId } from '../../../src/run/paths.js';
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

  const lossCases: [RunRecord['state'], boolean, boolean, number, string][] = [
    // state, detached, supervisor alive, processes lost -> status
    ['ready', true, true, 1, 'degraded'], // the detached supervisor saw a worker die
    ['ready', true, false, 1, 'degraded'], // its watcher gone too: still judged by its processes
    ['ready', false, true, 1, 'degraded'], // foreground, between the death and the stop
    ['degraded', true, true, 0, 'degraded'], // recorded degraded (a process died, another took its pid)
    ['ready', true, true, 0, 'ready'],
    ['starting', false, true, 1, 'starting'], // the supervisor fails the start itself
    ['ready', false, false, 1, 'orphaned'],
    ['degraded', true, false, 0, 'degraded'],
  ];
  it.each(lossCases)('%s (detached %s), supervisor %s, %i lost -> %s', (state, detached, supervisor, lost, want) => {
    expect(runStatus(rec(state, detached), { supervisor, processes: true, lost })).toBe(want);
  });
});

describe('the up lock (flock, held for the life of up)', () => {
  it('parseLock: the owner the file describes; anything else says nothing', () => {
    expect(parseLock('{"pid":42,"runId":"r"}')).toMatchObject({ pid: 42, runId: 'r' });
    expect(parseLock('')).toBeNull();
    expect(parseLock('{"pid":"x"}')).toBeNull();
  });

  it('one up per state dir: a second acquire while the first holds it names its run and pid; release lets the next one in', async () => {
    const h = home();
    const lock = await acquireUpLock(h.stateDir, 'run-a');
    lock.describe('run-a-2');
    expect(JSON.parse(readFileSync(join(h.stateDir, 'up.lock'), 'utf8'))).toMatchObject({ pid: process.pid, runId: 'run-a-2' });
    const err = await acquireUpLock(h.stateDir, 'run-b').catch((e) => e);
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(`another up is running: run run-a-2 (pid ${process.pid}); one up per state directory unless each run has a name`);
    await lock.release();
    const again = await acquireUpLock(h.stateDir, 'run-b');
    await again.release();
    expect(readdirSync(h.stateDir).sort()).toEqual(['runs', 'up.lock']); // the file stays; no tmp files
  });

  it('the kernel judges it, not a pid: a holder whose file names a pid that is gone here (another pid namespace) still holds it', async () => {
    const h = home();
    mkdirSync(h.stateDir, { recursive: true, mode: 0o700 });
    const path = join(h.stateDir, 'up.lock');
    writeFileSync(path, JSON.stringify({ pid: deadPid(), runId: 'in-a-container' }));
    // One process holds it (the shell locks its fd 9, then becomes sleep): killing it releases it.
    const holder = spawn('bash', ['-c', `exec 9<>'${path}' && flock --exclusive 9 && exec sleep 30`], { stdio: 'ignore' });
    try {
      await waitUntil(() => spawnSync('flock', ['--nonblock', path, 'true']).status === 1, 'the holder to take the lock');
      const err = await acquireUpLock(h.stateDir, 'mine').catch((e) => e);
      expect(err).toBeInstanceOf(UserError);
      expect(err.message).toMatch(/^another up is running: run in-a-container \(pid \d+\)/);
    } finally {
      holder.kill('SIGKILL');
      await once(holder, 'exit');
    }
    // And a file naming a live pid that holds nothing is no lock at all.
    writeFileSync(path, JSON.stringify({ pid: process.pid, runId: 'stale' }));
    const lock = await acquireUpLock(h.stateDir, 'new');
    expect(JSON.parse(readFileSync(path, 'utf8')).runId).toBe('new');
    await lock.release();
  });

  it('an up killed with SIGKILL releases it (the kernel closes its descriptor)', async () => {
    const h = home();
    const code = `import('${join(ROOT, 'dist', 'run', 'state.js')}').then(async (m) => { await m.acquireUpLock(${JSON.stringify(h.stateDir)}, 'killed'); console.log('locked'); setInterval(() => {}, 1000); })`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((r) => child.stdout!.once('data', () => r()));
    expect((await acquireUpLock(h.stateDir, 'mine').catch((e) => e)).message).toMatch(/run killed/);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const lock = await acquireUpLock(h.stateDir, 'mine');
    await lock.release();
  });
});

describe('run directories', () => {
  it('created exclusively and private; a taken id (or a symlink planted at it) gets a suffix, never followed', () => {
    const h = home();
    mkdirSync(join(h.stateDir, 'runs'), { recursive: true });
    const elsewhere = join(h.dir, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(h.stateDir, 'runs', 'r1'));
    expect(createRunDir(h.stateDir, 'r1')).toBe('r1-2');
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(lstatSync(join(h.stateDir, 'runs', 'r1-2')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(h.stateDir, 'runs', 'r1-2')).sort()).toEqual(['discovery', 'logs']);
    expect(createRunDir(h.stateDir, 'r1')).toBe('r1-3');
    removeEmptyRunDir(h.stateDir, 'r1-3');
    expect(existsSync(join(h.stateDir, 'runs', 'r1-3'))).toBe(false);
  });

  it('run ids are unique to the millisecond', () => {
    const t = new Date(2026, 10, 30, 10, 15, 0, 7);
    expect(newRunId('agg', t)).toBe('20261130-101500-007-agg');
    expect(newRunId('agg', new Date(t.getTime() + 1))).not.toBe(newRunId('agg', t));
  });
});

describe('run records', () => {
  it('writeRun/readRun round-trip; listRuns newest first, unreadable skipped; unknown id lists recent ones', async () => {
    const h = home();
    await writeFakeRun(h.stateDir, { id: '20261130-090000-agg', createdAt: '2026-11-30T09:00:00Z', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    await writeFakeRun(h.stateDir, { id: '20261130-100000-agg', createdAt: '2026-11-30T10:00:00Z', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    mkdirSync(join(h.stateDir, 'runs', 'broken'), { recursive: true });
    writeFileSync(join(h.stateDir, 'runs', 'broken', 'run.json'), 'not json');
    const warnings: string[] = [];
    onRecordWarning((w) => warnings.push(w));
    expect((await listRuns(h.stateDir)).map((r) => r.id)).toEqual(['20261130-100000-agg', '20261130-090000-agg']);
    expect(warnings).toEqual([expect.stringMatching(/^dynamo-dev: warning: .*runs\/broken\/run\.json: skipped, not a valid run record: not JSON/)]);
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
