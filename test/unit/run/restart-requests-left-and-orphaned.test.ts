import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RESTART_CAPABILITY, appendRestartEvent, eventsPath, newRequestId, orphanReason, takeRestartRequests, withdrawLeftRequests,
  withdrawRestartRequest, writeRestartRequest, type RestartRequest,
} from '../../../src/run/restart-request.js';
import { readStatSync } from '../../../src/host/procs/proc-files.js';
import { DEFAULT_GRACE_S } from '../../../src/defaults.js';

// Requests in a run's restart folder as the supervisor and the command find them: those whose
// asker still waits are taken (in name order, each once), those left by a command that ended are
// answered "not acted on" and removed, and files that are not requests of ours (a FIFO, a link, a
// torn, foreign or huge file, a name that does not match its id) are left alone and unread.

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function stateDir() {
  const d = mkdtempSync(join(tmpdir(), 'dd-restart-left-'));
  dirs.push(d);
  mkdirSync(join(d, 'runs', 'r1', 'restart'), { recursive: true });
  return d;
}
const folder = (d: string) => join(d, 'runs', 'r1', 'restart');
const me = (): RestartRequest['by'] => ({ pid: process.pid, startTicks: readStatSync(process.pid)!.startTicks });
/** This test process's pid with another start time: a command that ended and whose pid was reused. */
const ended = (): RestartRequest['by'] => ({ pid: process.pid, startTicks: readStatSync(process.pid)!.startTicks + 1 });
const req = (id: string, by = me(), more: Partial<RestartRequest> = {}): RestartRequest => ({ id, process: 'agg-0', graceMs: 1000, readyTimeoutMs: 0, by, ...more });
/** A request file written by hand (fields the command would never write). */
function plant(d: string, id: string, body: unknown, name = `${id}.request`) {
  writeFileSync(join(folder(d), `${id}.events`), '');
  writeFileSync(join(folder(d), name), typeof body === 'string' ? body : JSON.stringify(body));
}
const eventsOf = (d: string, id: string) => readFileSync(eventsPath(d, 'r1', id), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

describe('restart request ids, capability and withdrawal', () => {
  it('run.json names the capability "restart"; an id is the time then the pid', () => {
    expect(RESTART_CAPABILITY).toBe('restart');
    expect(newRequestId(4321, 1_700_000_000_000)).toBe('1700000000000-4321');
  });

  it('a withdrawal says whether the request was still there (true once, then false: taken or gone)', () => {
    const d = stateDir();
    writeRestartRequest(d, 'r1', req('5-a'));
    expect(withdrawRestartRequest(d, 'r1', '5-a')).toBe(true);
    expect(existsSync(join(folder(d), '5-a.request'))).toBe(false);
    expect(withdrawRestartRequest(d, 'r1', '5-a')).toBe(false);
  });
});

describe('the fields of a request as the supervisor reads them', () => {
  it('grace: 0 is kept, a negative or missing one is the default; ready timeout: 0 and positive kept, negative is 0', () => {
    const d = stateDir();
    const by = me();
    plant(d, '1-a', { id: '1-a', process: 'agg-0', graceMs: 0, readyTimeoutMs: 5000, by });
    plant(d, '1-b', { id: '1-b', process: 'agg-0', graceMs: -1, readyTimeoutMs: -5, by });
    plant(d, '1-c', { id: '1-c', process: 'agg-0', by });
    plant(d, '1-d', { id: '1-d', process: 'agg-0', graceMs: 2500, readyTimeoutMs: 0, by });
    const got = takeRestartRequests(d, 'r1');
    expect(got).toEqual([
      { id: '1-a', process: 'agg-0', graceMs: 0, readyTimeoutMs: 5000, by },
      { id: '1-b', process: 'agg-0', graceMs: DEFAULT_GRACE_S * 1000, readyTimeoutMs: 0, by },
      { id: '1-c', process: 'agg-0', graceMs: DEFAULT_GRACE_S * 1000, readyTimeoutMs: 0, by },
      { id: '1-d', process: 'agg-0', graceMs: 2500, readyTimeoutMs: 0, by },
    ]);
    expect(DEFAULT_GRACE_S * 1000).toBeGreaterThan(1000);
  });

  it('a start time that is not a number is none: the request is left, and said with a null start time', () => {
    const d = stateDir();
    plant(d, '2-a', { id: '2-a', process: 'agg-1', graceMs: 1000, readyTimeoutMs: 0, by: { pid: process.pid, startTicks: 'soon' } });
    const left = withdrawLeftRequests(d, 'r1', 'ready');
    expect(left).toEqual([{ id: '2-a', process: 'agg-1', graceMs: 1000, readyTimeoutMs: 0, by: { pid: process.pid, startTicks: null } }]);
  });

  it('files that are not requests of ours are left where they are, unanswered: torn, foreign, a name not its id, huge, a FIFO, a link', () => {
    const d = stateDir();
    const by = me();
    plant(d, '3-torn', '{"id":"3-torn","process":"agg-');
    plant(d, '3-foreign', { hello: 'world' });
    plant(d, '3-noby', { id: '3-noby', process: 'agg-0' });
    // A request whose id is another's: taken under this name it would answer the wrong command.
    plant(d, '3-other', { id: '3-mine', process: 'agg-0', graceMs: 1000, readyTimeoutMs: 0, by }, '3-other.request');
    plant(d, '3-huge', `{"id":"3-huge","process":"agg-0","by":{"pid":${process.pid}},"pad":"${'x'.repeat(70 * 1024)}"}`);
    execFileSync('mkfifo', [join(folder(d), '3-fifo.request')]);
    const target = join(d, 'target.json');
    writeFileSync(target, JSON.stringify({ id: '3-link', process: 'agg-0', by }));
    symlinkSync(target, join(folder(d), '3-link.request'));
    const before = readdirSync(folder(d)).sort();
    expect(takeRestartRequests(d, 'r1')).toEqual([]);
    expect(withdrawLeftRequests(d, 'r1', 'ready')).toEqual([]);
    expect(readdirSync(folder(d)).sort()).toEqual(before);
    for (const id of ['3-torn', '3-foreign', '3-noby', '3-other', '3-mine', '3-huge']) {
      if (existsSync(eventsPath(d, 'r1', id))) expect(readFileSync(eventsPath(d, 'r1', id), 'utf8')).toBe('');
    }
  });
});

describe('requests whose asker still waits, and those left by a command that ended', () => {
  it('the supervisor takes waiting requests in name order, each once; a left one is answered "not acted on" (run unchanged) and removed, never taken', () => {
    const d = stateDir();
    // Written out of order: the folder's listing order is not the order they are taken in.
    for (const id of ['9-e', '9-b', '9-d', '9-a', '9-c']) writeRestartRequest(d, 'r1', req(id));
    writeRestartRequest(d, 'r1', req('9-left', ended(), { process: 'agg-1' }));
    const got = takeRestartRequests(d, 'r1');
    expect(got.map((r) => r.id)).toEqual(['9-a', '9-b', '9-c', '9-d', '9-e']);
    expect(existsSync(join(folder(d), '9-left.request'))).toBe(false);
    expect(existsSync(join(folder(d), '9-left.request.taken'))).toBe(false);
    expect(eventsOf(d, '9-left')).toEqual([{
      event: 'done', ok: false, process: 'agg-1', diagnosis: null, lastLines: [], log: null, runState: 'unchanged',
      reason: `the restart of agg-1 asked by pid ${process.pid} was not acted on: that command ended before the run's supervisor took it`,
    }]);
    expect(takeRestartRequests(d, 'r1')).toEqual([]);
  });

  it('the orphan reason names the process and the pid that asked', () => {
    expect(orphanReason(req('x', { pid: 4242, startTicks: 1 }, { process: 'decode-0' })))
      .toBe('the restart of decode-0 asked by pid 4242 was not acted on: that command ended before the run\'s supervisor took it');
  });

  it('the command, before it asks, withdraws only the left requests: returned, answered with the run\'s state, removed; a waiting one stays', () => {
    const d = stateDir();
    writeRestartRequest(d, 'r1', req('7-wait'));
    const left = req('7-left', ended(), { process: 'agg-1' });
    writeRestartRequest(d, 'r1', left);
    writeRestartRequest(d, 'r1', req('7-nostart', { pid: process.pid }));
    const got = withdrawLeftRequests(d, 'r1', 'degraded');
    expect(got).toEqual([left, { ...req('7-nostart', { pid: process.pid }), by: { pid: process.pid, startTicks: null } }]);
    expect(readdirSync(folder(d)).filter((n) => n.endsWith('.request'))).toEqual(['7-wait.request']);
    expect(eventsOf(d, '7-left')).toEqual([{
      event: 'done', ok: false, process: 'agg-1', reason: orphanReason(left), diagnosis: null, lastLines: [], log: null, runState: 'degraded',
    }]);
    expect(eventsOf(d, '7-nostart')).toHaveLength(1);
    expect(eventsOf(d, '7-wait')).toEqual([]);
    expect(withdrawLeftRequests(d, 'r1', 'degraded')).toEqual([]);
  });

  it('no restart folder at all: nothing pending, nothing withdrawn', () => {
    const d = mkdtempSync(join(tmpdir(), 'dd-restart-left-'));
    dirs.push(d);
    expect(takeRestartRequests(d, 'r1')).toEqual([]);
    expect(withdrawLeftRequests(d, 'r1', 'ready')).toEqual([]);
  });
});

describe('appending events', () => {
  it('every append closes what it opened (a long restart does not run the supervisor out of descriptors)', () => {
    const d = stateDir();
    writeRestartRequest(d, 'r1', req('8-a'));
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 50; i++) appendRestartEvent(d, 'r1', '8-a', { event: 'counted', process: 'agg-0', by: 'frontend' });
    expect(open()).toBe(before);
    expect(eventsOf(d, '8-a')).toHaveLength(50);
  });
});
