import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { homeTie } from '../helpers/home-processes.js';
import { isAlive, killStarted, spawnLone, track, waitUntil, writeFakeRun } from '../helpers/proc-trees.js';
import { markedPids, portBlock, records } from '../helpers/runs.js';
import { startUp } from '../helpers/up-run.js';
import { killChildren } from '../helpers/children.js';
import { descendants, isSameProcess } from '../../src/run/proc.js';
import { markerFor, RUN_MARKER } from '../../src/run/run-scan.js';

// A test that times out mid-`up` gets no chance to stop its run: its cleanup (afterEach/afterAll)
// runs and removes the temporary home. tempHome()'s cleanup must stop every process of the home's
// runs first, or a fake frontend and worker live on, adopted by init, holding ports and memory for
// the rest of the suite. Here the runs are left running on purpose and only the cleanup is called.

const homes: ReturnType<typeof tempHome>[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  killStarted();
  await killChildren(children);
  for (const h of homes.splice(0)) h.cleanup();
});

async function home() {
  const h = tempHome('dd-cleanup-');
  homes.push(h);
  const base = await portBlock(21_000, 500);
  const sets = ['--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`];
  return { ...h, sets, env: fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120' } }) };
}

/** A process that looks like a run's but is not this home's: a sibling dir's marker, its DYNAMO_DEV_HOME. */
function bystander(env: Record<string, string>): number {
  const c = spawn('bash', ['-c', 'exec -a VLLM::EngineCore sleep 3000'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, ...env } });
  track(c.pid!);
  c.unref();
  return c.pid!;
}

describe('a temp home\'s cleanup stops what a timed-out test left running', () => {
  it('a detached run (supervisor, frontend, worker, engine core): after cleanup no process carries its marker and the home is gone; look-alikes of other homes live on', async () => {
    const h = await home();
    const up = await runCli(['up', 'agg', '--detach', '--no-preflight', '--json', ...h.sets], h.env, { timeoutMs: 30_000 });
    expect(up.code, up.stderr).toBe(0);
    const rec = records(h.stateDir)[0];
    const marker = markerFor(h.stateDir, rec.id);
    // The engine core from the live tree, not from the record: the record's descendants are the scan
    // taken at ready, and once, on a loaded machine, it lacked the engine core (cause not found; the
    // supervisor's later scans add it). This test is about the cleanup, not that scan.
    const agg0 = rec.processes.find((p) => p.name === 'agg-0')!.pid!;
    const engine = await waitUntil(() => descendants(agg0).find((d) => d.cmd.startsWith('VLLM::EngineCore')), 'the engine core under agg-0');
    const runPids = [...rec.processes.map((p) => p.pid!), engine.pid];
    expect(markedPids(marker)).toEqual(expect.arrayContaining(runPids));
    expect(rec.supervisor.detached).toBe(true);
    expect(isSameProcess(rec.supervisor.pid, rec.supervisor.startTicks)).toBe(true);

    // Not this home's: a marker of a sibling state dir whose path starts the same, a process started
    // with a sibling home, and a live process a (test-written) record names as its supervisor.
    const sibling = `${h.stateDir}-other`;
    const others = [
      bystander({ [RUN_MARKER]: join(sibling, 'runs', rec.id) }),
      bystander({ DYNAMO_DEV_HOME: sibling }),
    ];
    const named = await spawnLone('node /elsewhere/bin/dynamo-dev.js up');
    await writeFakeRun(h.stateDir, { id: 'fake', state: 'stopped', supervisor: { pid: named.pid, startTicks: named.startTicks }, processes: [] });

    h.cleanup(); // as afterEach would after a timeout: the run was never stopped
    homes.splice(homes.indexOf(h), 1);

    expect(markedPids(marker)).toEqual([]);
    for (const pid of runPids) expect(isAlive(pid), `run pid ${pid}`).toBe(false);
    expect(isSameProcess(rec.supervisor.pid, rec.supervisor.startTicks)).toBe(false);
    expect(existsSync(h.dir)).toBe(false);
    for (const pid of [...others, named.pid]) expect(isAlive(pid), `bystander ${pid}`).toBe(true);
  });

  it('an `up` still starting (its worker not ready): cleanup kills the `up` itself (nothing more can start) and what it started', async () => {
    const h = await home();
    // The worker never logs its KV cache size: `up` waits on it for the whole --ready-timeout.
    const up = startUp(['up', 'agg', '--json', '--no-preflight', '--ready-timeout', '600', ...h.sets], { ...h.env, FAKE_WORKER_SCENARIO: 'slow', FAKE_WORKER_SLOW_MS: '600000' }, children);
    const plan = await up.waitEvent((e) => e.event === 'plan', null);
    const marker = markerFor(h.stateDir, plan.runId as string);
    await up.waitEvent((e) => e.event === 'starting' && e.process === 'agg-0', null);
    const started = await waitUntil(() => (markedPids(marker).length >= 2 ? markedPids(marker) : null), 'the frontend and the worker');
    expect(up.child.exitCode).toBeNull();

    h.cleanup();
    homes.splice(homes.indexOf(h), 1);

    expect(await up.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(markedPids(marker)).toEqual([]);
    for (const pid of started) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    expect(existsSync(h.dir)).toBe(false);
  });
});

describe('a home the cleanup cannot be held by', () => {
  it('a run.json that is a named pipe (tests plant them) is skipped: the cleanup returns at once and removes the home', () => {
    const h = tempHome('dd-cleanup-');
    homes.push(h);
    const run = join(h.stateDir, 'runs', 'r1');
    mkdirSync(run, { recursive: true });
    execFileSync('mkfifo', [join(run, 'run.json')]);
    // A writer comes after 3 s: a cleanup that opened the pipe to read the record would wait for it
    // (in the suite: forever, with the suite lock held).
    const writer = spawn('sh', ['-c', `sleep 3; echo '{}' > '${join(run, 'run.json')}'`], { detached: true, stdio: 'ignore' });
    track(writer.pid!);
    writer.unref();
    const t0 = performance.now();
    h.cleanup();
    homes.splice(homes.indexOf(h), 1);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(existsSync(h.dir)).toBe(false);
  });
});

describe('what ties a process to a home (pure)', () => {
  const dirs = ['/tmp/dd-x/state'];
  it('the run marker of one of its runs, or the home as DYNAMO_DEV_HOME; nothing else', () => {
    expect(homeTie('A=1\0DYNAMO_DEV_RUN=/tmp/dd-x/state/runs/r1\0B=2', dirs)).toBe('run marker /tmp/dd-x/state/runs/r1');
    expect(homeTie('DYNAMO_DEV_HOME=/tmp/dd-x/state', dirs)).toBe('DYNAMO_DEV_HOME=/tmp/dd-x/state');
    expect(homeTie('DYNAMO_DEV_HOME=/tmp/dd-x/state/', dirs)).toBe('DYNAMO_DEV_HOME=/tmp/dd-x/state/');
    for (const env of [
      'DYNAMO_DEV_RUN=/tmp/dd-x/state-other/runs/r1', // a sibling whose path starts the same
      'DYNAMO_DEV_RUN=/tmp/dd-x/state/runsX/r1',
      'DYNAMO_DEV_RUN=/tmp/dd-x/state', // the state dir itself is no run
      'DYNAMO_DEV_HOME=/tmp/dd-x/state-other',
      'DYNAMO_DEV_HOME=',
      'X_DYNAMO_DEV_RUN=/tmp/dd-x/state/runs/r1',
      'PWD=/tmp/dd-x/state',
      '',
    ]) expect(homeTie(env, dirs), env).toBeNull();
  });
});

