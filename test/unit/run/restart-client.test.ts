import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { askRestart, cannotRestart } from '../../../src/run/restart-client.js';
import { eventsPath, RESTART_CAPABILITY, type RestartEvent } from '../../../src/run/restart-request.js';
import { RUN_MARKER, markerFor } from '../../../src/run/run-scan.js';
import { runDir } from '../../../src/run/paths.js';
import { readStartTicks } from '../../../src/run/proc.js';
import type { RunRecord } from '../../../src/run/types.js';
import { tempHomes } from '../../helpers/cli.js';

// run/restart-client.ts, the command's side of `dynamo-dev restart`: it leaves a request, wakes
// the run's supervisor with SIGUSR2 and follows its answer. Here the supervisor is a child process
// of the test that carries the run's marker (or not) and says on stdout when the signal came; the
// test answers as the supervisor would, in the events file. The whole restart is e2e (restart.test).

const home = tempHomes('dd-restart-client-');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** A stand-in supervisor: `ignore`: takes SIGUSR2 and says so; `die`: SIGUSR2's default (it ends). */
async function supervisor(marker: string | null, onUsr2: 'ignore' | 'die'): Promise<{ child: ChildProcess; signalled: Promise<void> }> {
  const code = `${onUsr2 === 'ignore' ? "process.on('SIGUSR2', () => process.stdout.write('usr2\\n'));" : ''} setInterval(() => {}, 1000); process.stdout.write('up\\n');`;
  const env = { ...process.env };
  delete env[RUN_MARKER];
  if (marker !== null) env[RUN_MARKER] = marker;
  const child = spawn(process.execPath, ['-e', code], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const lines = createInterface({ input: child.stdout! });
  const seen = (what: string) => new Promise<void>((resolve) => lines.on('line', (l) => { if (l === what) resolve(); }));
  const signalled = seen('usr2');
  await seen('up');
  return { child, signalled };
}

/** `requests: null`: a record of an older dynamo-dev, without the field. */
function record(pid: number, requests: string[] | null = [RESTART_CAPABILITY]): RunRecord {
  return { id: '20261207-200000-000-mocker', name: 'lab', state: 'ready', supervisor: { pid, startTicks: readStartTicks(pid), ...(requests ? { requests } : {}) } } as unknown as RunRecord;
}

function ask(stateDir: string, rec: RunRecord, takeTimeoutMs = 10_000) {
  const events: RestartEvent[] = [];
  const answer = askRestart({ stateDir, rec, process: 'agg-1', graceMs: 1000, readyTimeoutMs: 0, onEvent: (e) => void events.push(e), takeTimeoutMs });
  return { events, answer };
}

const requestFiles = (stateDir: string, rec: RunRecord) => {
  const dir = join(runDir(stateDir, rec.id), 'restart');
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.request')) : [];
};

describe('cannotRestart: why a run\'s supervisor cannot take the request', () => {
  it('gone: only the supervisor can start a process again (it is their parent); teardown by the run\'s name, then up', () => {
    const rec = record(process.pid);
    expect(cannotRestart(rec, false)).toBe(`its supervisor (pid ${process.pid}) is gone, and only the run's supervisor can start a process of it again (it is their parent); stop the run with \`dynamo-dev teardown --run lab\` and start it again with \`dynamo-dev up\``);
    const unnamed = { ...rec, name: null } as unknown as RunRecord;
    expect(cannotRestart(unnamed, false)).toContain('`dynamo-dev teardown --run 20261207-200000-000-mocker`');
  });

  it('a supervisor of an older dynamo-dev (no restart capability recorded) cannot; one that has it can', () => {
    expect(cannotRestart(record(process.pid, null), true)).toMatch(/^its supervisor \(pid \d+\) does not take restart requests \(started by an older dynamo-dev, or by a test harness\); stop the run with `dynamo-dev teardown --run lab` and start it again$/);
    expect(cannotRestart(record(process.pid, ['other']), true)).toMatch(/does not take restart requests/);
    expect(cannotRestart(record(process.pid), true)).toBeNull();
  });
});

describe('askRestart', () => {
  it('a supervisor that is gone (its start time no longer matches): failed at once, the request withdrawn, nothing signalled', async () => {
    const { stateDir } = home();
    const rec = record(process.pid);
    rec.supervisor.startTicks = (rec.supervisor.startTicks ?? 0) + 1;
    const d = await ask(stateDir, rec).answer;
    expect(d).toEqual({ event: 'done', ok: false, process: 'agg-1', reason: `the run's supervisor (pid ${process.pid}) is gone`, diagnosis: null, lastLines: [], log: null, runState: 'ready' });
    expect(requestFiles(stateDir, rec)).toEqual([]);
  });

  it('a live process with the supervisor\'s pid and start time but without the run\'s marker is not signalled: left alone, said so', async () => {
    const { stateDir } = home();
    const s = await supervisor(null, 'ignore');
    let signalled = false;
    void s.signalled.then(() => { signalled = true; });
    const rec = record(s.child.pid!);
    const d = await ask(stateDir, rec).answer;
    expect(d).toMatchObject({ ok: false, reason: `the run's supervisor: pid ${s.child.pid} is no longer ours (no run marker): left alone` });
    expect(requestFiles(stateDir, rec)).toEqual([]);
    await new Promise((r) => setTimeout(r, 200));
    expect(signalled).toBe(false);
  });

  it('follows the supervisor\'s answer to `done`, passing each event on (a torn line is passed over)', async () => {
    const { stateDir } = home();
    const rec = record(0);
    const s = await supervisor(markerFor(stateDir, rec.id), 'ignore');
    Object.assign(rec.supervisor, { pid: s.child.pid, startTicks: readStartTicks(s.child.pid!) });
    const { events, answer } = ask(stateDir, rec);
    await s.signalled;
    const [req] = requestFiles(stateDir, rec);
    const events_ = eventsPath(stateDir, rec.id, req.replace(/\.request$/, ''));
    appendFileSync(events_, `${JSON.stringify({ event: 'taken', process: 'agg-1', pid: 102 })}\n{"event":\n`);
    appendFileSync(events_, `${JSON.stringify({ event: 'done', ok: true, process: 'agg-1', ms: 812, runState: 'ready' })}\n`);
    expect(await answer).toEqual({ event: 'done', ok: true, process: 'agg-1', ms: 812, runState: 'ready' });
    expect(events.map((e) => e.event)).toEqual(['taken', 'done']);
  });

  it('a supervisor that never takes the request: failed after the take timeout, the request withdrawn (nothing stays asked)', async () => {
    const { stateDir } = home();
    const rec = record(0);
    const s = await supervisor(markerFor(stateDir, rec.id), 'ignore');
    Object.assign(rec.supervisor, { pid: s.child.pid, startTicks: readStartTicks(s.child.pid!) });
    const { answer } = ask(stateDir, rec, 1000);
    await s.signalled;
    expect(requestFiles(stateDir, rec)).toHaveLength(1);
    expect(await answer).toMatchObject({ ok: false, reason: `the run's supervisor (pid ${s.child.pid}) did not take the request within 1 s` });
    expect(requestFiles(stateDir, rec)).toEqual([]);
  });

  it('a supervisor that ends during the restart: failed, pointing at status (its record still names every pid)', async () => {
    const { stateDir } = home();
    const rec = record(0);
    const s = await supervisor(markerFor(stateDir, rec.id), 'die');
    Object.assign(rec.supervisor, { pid: s.child.pid, startTicks: readStartTicks(s.child.pid!) });
    const { events, answer } = ask(stateDir, rec, 60_000);
    await once(s.child, 'exit');
    expect(await answer).toMatchObject({ ok: false, reason: `the run's supervisor (pid ${s.child.pid}) ended during the restart; see \`dynamo-dev status\`` });
    expect(events).toEqual([]);
  });
});
