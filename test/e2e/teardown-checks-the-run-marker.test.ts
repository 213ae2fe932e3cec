import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { deadPid, isAlive, killStarted, runEnv, spawnLone, spawnTree, writeFakeRun } from '../helpers/proc-trees.js';
import { readRun } from '../../src/run/state.js';

// Through the built binary (issue 29): a record naming a live process with its real start time is
// not enough for teardown or restart to signal it: the process must carry the run's marker
// (DYNAMO_DEV_RUN=<run dir>, which every process `up` starts inherits). A start time can be read
// off any process (a forged or copied run.json); the marker cannot. Those left alone are said so.

const home = tempHomes('dd-marker-e2e-');
afterEach(() => killStarted());

interface Doc {
  stopped: { name: string; pid: number; signal: string | null; note?: string; run?: string | null }[];
  remaining: { pid: number }[];
}

describe('teardown signals a recorded pid only when it carries the run marker', () => {
  it('a recorded worker that is a live process of ours without the marker (its real start time) is left alone, and so is its engine; the marked frontend is stopped', async () => {
    const h = home();
    const env = fakeEnv(h);
    const id = '20261207-140000-000-agg';
    const frontend = await spawnTree('honour', runEnv(h.stateDir, id));
    const stranger = await spawnTree('honour'); // someone's job: a leader and its VLLM::EngineCore, no marker
    await writeFakeRun(h.stateDir, {
      id, supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [
        { name: 'frontend', pid: frontend.pid, startTicks: frontend.startTicks },
        { name: 'agg-0', pid: stranger.pid, startTicks: stranger.startTicks, descendants: [stranger.engine] },
      ],
    });
    const r = await runCli(['teardown', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.stopped.find((s) => s.name === 'frontend')).toMatchObject({ signal: 'SIGTERM' });
    expect(doc.stopped.find((s) => s.name === 'agg-0')).toMatchObject({
      pid: stranger.pid, signal: null, note: `pid ${stranger.pid} is no longer ours (no run marker): left alone`,
    });
    expect(doc.stopped.map((s) => s.pid)).not.toContain(stranger.engine.pid);
    expect(doc.remaining).toEqual([]);
    expect(isAlive(frontend.pid)).toBe(false);
    expect(isAlive(stranger.pid)).toBe(true);
    expect(isAlive(stranger.engine.pid)).toBe(true);
    // The run is over: what is alive is not its own.
    expect((await readRun(h.stateDir, id)).state).toBe('stopped');
  });

  it('said in the human report too, and a forged supervisor pid is never signalled', async () => {
    const h = home();
    const env = fakeEnv(h);
    const id = 'forged';
    const sup = await spawnLone('node-dynamo-dev-up'); // a process of ours, real start time, no marker, no run dir open
    const worker = await spawnLone('python3 -m dynamo.vllm');
    await writeFakeRun(h.stateDir, {
      id, supervisor: { pid: sup.pid, startTicks: sup.startTicks, detached: false },
      processes: [{ name: 'agg-0', pid: worker.pid, startTicks: worker.startTicks }],
    });
    const r = await runCli(['teardown', '--grace', '0.5'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`pid ${sup.pid} is no longer ours (no run marker): left alone`);
    expect(r.stdout).toContain(`pid ${worker.pid} is no longer ours (no run marker): left alone`);
    // Rows say 'no signal' where one was sent they name it (pid N  SIGTERM ...).
    expect(r.stdout).not.toMatch(/pid \d+ +SIG(TERM|KILL)/);
    expect(r.stdout).toMatch(/- supervisor +pid \d+ +no signal/);
    expect(isAlive(sup.pid)).toBe(true);
    expect(isAlive(worker.pid)).toBe(true);
  });

  it('a leader gone: its recorded engine is stopped when it carries the marker, left alone when it carries other variables only', async () => {
    const h = home();
    const env = fakeEnv(h);
    const ours = await spawnLone('VLLM::EngineCore', ['3000'], { env: runEnv(h.stateDir, 'gone-a') });
    const theirs = await spawnLone('VLLM::EngineCore');
    for (const [id, e] of [['gone-a', ours], ['gone-b', theirs]] as const) {
      await writeFakeRun(h.stateDir, {
        id, supervisor: { pid: deadPid(), startTicks: 1, detached: true },
        processes: [{ name: 'agg-0', pid: deadPid(), startTicks: 1, descendants: [{ pid: e.pid, startTicks: e.startTicks, cmd: 'VLLM::EngineCore' }] }],
      });
    }
    const r = await runCli(['teardown', '--json', '--grace', '0.5'], env);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.stopped.find((s) => s.run === 'gone-b')).toMatchObject({ signal: null, note: `pid ${theirs.pid} is no longer ours (no run marker): left alone` });
    expect(isAlive(ours.pid)).toBe(false);
    expect(isAlive(theirs.pid)).toBe(true);
  });
});

describe('restart signals a recorded supervisor only when it is the run\'s', () => {
  it('a record naming a live process of ours without the marker as its supervisor: restart fails naming it, nothing signalled', async () => {
    const h = home();
    const env = fakeEnv(h);
    const id = 'forged-sup';
    const sup = await spawnLone('node-dynamo-dev-up'); // SIGUSR2 (the restart signal) would end this sleep
    const worker = await spawnLone('python3 -m dynamo.vllm', ['3000'], { env: runEnv(h.stateDir, id) });
    await writeFakeRun(h.stateDir, {
      id, supervisor: { pid: sup.pid, startTicks: sup.startTicks, detached: false },
      processes: [{ name: 'agg-0', pid: worker.pid, startTicks: worker.startTicks }],
    });
    const path = join(h.stateDir, 'runs', id, 'run.json');
    const rec = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...rec, supervisor: { ...rec.supervisor, requests: ['restart'] } }));
    const r = await runCli(['restart', 'agg-0'], env, { timeoutMs: 20_000 });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout + r.stderr).toContain(`the run's supervisor: pid ${sup.pid} is no longer ours (no run marker): left alone`);
    expect(isAlive(sup.pid)).toBe(true);
    expect(isAlive(worker.pid)).toBe(true);
  });
});
