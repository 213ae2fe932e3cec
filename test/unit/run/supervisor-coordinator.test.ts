import { describe, expect, it } from 'vitest';
import type { SupervisorResult } from '../../../src/run/supervisor.js';
import type { UpEvent } from '../../../src/run/events.js';
import type { Plan, PlannedProcess } from '../../../src/plan/types.js';
import type { HttpProbe } from '../../../src/host/types.js';
import type { StopSnapshot } from '../../../src/run/stop.js';
import { basePlan as plan, KV_LINE, plannedWorker as worker, supervisorHarness, type HarnessOptions } from '../../helpers/supervisor-harness.js';

// The coordinator with every dependency faked (test/helpers/supervisor-harness.ts): processes live
// in a FakeMachine, logs are pushed line by line, HTTP answers come from a table, time moves only
// when told.

/** The shared harness with an inherited run marker in the environment (it must be replaced). */
function harness(opts: HarnessOptions = {}) {
  return supervisorHarness({ env: { HOME: '/home/u', DYNAMO_DEV_RUN: '/old/run' }, ...opts });
}

/** The detached supervisor (up --detach) keeps watching after ready; `diagnose` is the top finding of any log. */
function watching(diagnose?: string) {
  return harness({
    detach: true, watch: true,
    deps: {
      diagnose: async (log) => ({
        top: diagnose ? { code: diagnose, title: 'T', severity: 'error' as const, explanation: 'e', fix: 'f', text: 'the line', file: log, line: 7 } : null,
      }),
    },
  });
}

describe('Supervisor coordinator with fake deps', () => {
  it('every child carries the run marker; each pid is on disk (synchronously) before its `starting` is told', async () => {
    const h = harness();
    void h.sup.run();
    await h.clock.advance(0);
    expect(h.envs.get('frontend')).toMatchObject({ HOME: '/home/u', DYNAMO_DEV_RUN: '/real/state/runs/r1' });
    expect(h.envs.get('agg-0')!.DYNAMO_DEV_RUN).toBe('/real/state/runs/r1');
    expect(h.journal.slice(0, 4)).toEqual([
      'write frontend=null,agg-0=null,agg-1=null', // before the first spawn
      'write frontend=100,agg-0=null,agg-1=null', 'starting frontend',
      'write frontend=100,agg-0=101,agg-1=null',
    ]);
    expect(h.journal[4]).toBe('starting agg-0');
    void h.sup.stop('SIGTERM');
    await h.clock.advance(2000); // the fake processes end on SIGTERM; let the stop finish
  });

  it('starts in plan order, is ready only when every process is, and stops everything when a worker dies after ready', async () => {
    const h = harness();
    let result: SupervisorResult | null = null;
    void h.sup.run().then((r) => (result = r));
    await h.clock.advance(0);
    expect(h.events.filter((e) => e.event === 'starting').map((e) => (e as { process: string }).process)).toEqual(['frontend', 'agg-0']);
    expect(h.states()).toEqual({ frontend: 'loading', 'agg-0': 'starting', 'agg-1': 'waiting' });

    h.lines.get('agg-0')!(KV_LINE);
    await h.clock.advance(0);
    expect(h.states()).toMatchObject({ 'agg-0': 'kv-allocated', 'agg-1': 'starting' }); // agg-1 starts on agg-0's KV line

    h.healthy.add('http://w/8081/health');
    h.healthy.add('http://f/v1/models');
    await h.clock.advance(200);
    expect(h.states()).toEqual({ frontend: 'ready', 'agg-0': 'ready', 'agg-1': 'starting' });
    expect(h.events.some((e) => e.event === 'ready')).toBe(false); // not while agg-1 is behind

    h.lines.get('agg-1')!(KV_LINE);
    h.healthy.add('http://w/8082/health');
    await h.clock.advance(100);
    const ready = h.events.find((e) => e.event === 'ready');
    expect(ready).toMatchObject({ runId: 'r1', workers: [{ name: 'agg-0', kvTokens: 14_816 }, { name: 'agg-1', kvTokens: 14_816 }] });
    expect(h.sup.record.state).toBe('ready');

    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(400);
    expect(h.events.find((e) => e.event === 'failed')).toMatchObject({ reason: 'agg-1 exited with code 1 after the run was ready', process: 'agg-1' });
    const stopped = h.events.find((e) => e.event === 'stopped') as Extract<UpEvent, { event: 'stopped' }>;
    expect(stopped.stopped.map((s) => [s.name, s.signal])).toEqual([['frontend', 'SIGTERM'], ['agg-0', 'SIGTERM'], ['agg-1', null]]);
    expect(result).toEqual({ outcome: 'failed', code: 1, reason: 'agg-1 exited with code 1 after the run was ready' });
    expect(h.states()).toEqual({ frontend: 'stopped', 'agg-0': 'stopped', 'agg-1': 'failed' });
    expect(h.writes.at(-1)).toBe('failed');
    expect(h.clock.pending).toBe(0);
  });

  /** Brings the harness's run to ready. */
  async function toReady(h: ReturnType<typeof harness>) {
    await h.allReady();
    await h.clock.advance(100);
  }

  it('detached and watching (the background supervisor of up --detach): a death after ready is recorded, the run degraded, the rest left running', async () => {
    const h = watching('cuda.oom');
    let result: SupervisorResult | null = null;
    void h.sup.run().then((r) => (result = r));
    await toReady(h);
    expect(h.events.find((e) => e.event === 'ready')).toMatchObject({ detached: true });
    expect(h.writes.at(-1)).toBe('ready'); // run.json said ready before `ready` was told
    expect(h.clock.pending).toBe(1); // watching: only the rare descendant re-scan is left

    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0);
    expect(result).toBeNull();
    expect(h.sup.record.state).toBe('degraded');
    expect(h.states()).toEqual({ frontend: 'ready', 'agg-0': 'ready', 'agg-1': 'failed' });
    const agg1 = h.sup.record.processes[2];
    expect(agg1).toMatchObject({ exitCode: 1, signal: null, diagnosis: { code: 'cuda.oom', text: 'the line', line: 7 } });
    expect(typeof agg1.endedAt).toBe('string');
    expect(h.machine.signals).toEqual([]); // nobody else was stopped
    expect(h.events.find((e) => e.event === 'exited')).toMatchObject({ process: 'agg-1', code: 1, afterReady: true, diagnosis: { code: 'cuda.oom' } });

    // Killed (the OOM killer): recorded with its signal; a clean exit 0 of the last one: exited. Then nothing is left: failed.
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: null, signal: 'SIGKILL', error: null });
    await h.clock.advance(0);
    expect(h.sup.record.processes[1]).toMatchObject({ state: 'failed', signal: 'SIGKILL' });
    expect(result).toBeNull();
    h.machine.remove(100);
    h.exits.get('frontend')!({ code: 0, signal: null, error: null });
    await h.clock.advance(500);
    expect(h.sup.record.processes[0].state).toBe('exited');
    expect(result).toEqual({ outcome: 'failed', code: 1, reason: 'every process of the run has ended' });
    expect(h.writes.at(-1)).toBe('failed');
  });

  it('detached and watching: a stop after ready is a plain stop (not before ready), everything stopped', async () => {
    const h = watching();
    const running = h.sup.run();
    await toReady(h);
    void h.sup.stop('SIGTERM');
    await h.clock.advance(2000);
    expect(await running).toEqual({ outcome: 'stopped', code: 0, signal: 'SIGTERM', beforeReady: false });
    expect(h.states()).toEqual({ frontend: 'stopped', 'agg-0': 'stopped', 'agg-1': 'stopped' });
  });

  it('the ready deadline blames the worker behind, not the frontend waiting for it', async () => {
    const h = harness({ readyTimeoutMs: 5000 });
    const running = h.sup.run();
    await h.clock.advance(4999);
    expect(h.events.some((e) => e.event === 'failed')).toBe(false);
    await h.clock.advance(1);
    await h.clock.advance(400);
    expect(await running).toEqual({ outcome: 'failed', code: 1, reason: 'not ready after 5 s: agg-0 is still starting (nothing useful logged yet)' });
    expect(h.states()).toEqual({ frontend: 'stopped', 'agg-0': 'failed', 'agg-1': 'stopped' });
  });

  it('escalate() during a user stop SIGKILLs at once; stop progress carries the SIGKILL deadline', async () => {
    const h = harness({ graceMs: 10_000 });
    const running = h.sup.run();
    await h.clock.advance(0);
    // Both started processes ignore SIGTERM.
    for (const pid of [100, 101]) {
      h.machine.remove(pid);
      h.machine.add({ pid, ppid: 11, pgid: pid, startTicks: 1000 + pid, cmd: 'stubborn', termExitMs: null });
    }
    const progress: StopSnapshot[] = [];
    h.sup.on('stop-progress', (s: StopSnapshot) => progress.push(structuredClone(s)));
    void h.sup.stop('SIGINT');
    await new Promise((r) => setImmediate(r));
    expect(progress[0]).toMatchObject({ killInMs: 10_000, targets: [{ name: 'frontend', phase: 'terminating' }, { name: 'agg-0', phase: 'terminating' }] });
    await h.clock.advance(250);
    expect(h.machine.signals.filter((s) => s.sig === 'SIGKILL')).toEqual([]);
    h.sup.escalate();
    await h.clock.advance(400);
    const result = await running;
    expect(h.machine.signals.filter((s) => s.sig === 'SIGKILL').map((s) => [s.t, s.pid])).toEqual([[250, -100], [250, -101]]);
    expect(result).toEqual({ outcome: 'stopped', code: 0, signal: 'SIGINT', beforeReady: true });
    expect(progress.at(-1)!.targets.every((t) => t.phase === 'done')).toBe(true);
  });

  it('live hints: the router\'s kv_event_publisher_disabled once; a lock wait names the holder; a stop by teardown says so, with progress', async () => {
    const h = harness({ stopRequest: () => 'pid 77' });
    void h.sup.run();
    await h.clock.advance(0);
    const warn = '2026-10-07T05:12:20.704420Z  WARN dynamo_llm::kv_router: KV-event publishing is disabled diagnostic_code="kv_event_publisher_disabled" worker_id=1';
    h.lines.get('frontend')!(warn);
    h.lines.get('frontend')!(warn);
    h.lines.get('agg-0')!('2026-10-07T04:58:21.118004Z  INFO filelock: Still waiting to acquire lock on /hf/.locks/x.lock (elapsed: 10.1 seconds)');
    h.lines.get('agg-0')!('2026-10-07T04:58:31.118004Z  INFO filelock: Still waiting to acquire lock on /hf/.locks/x.lock (elapsed: 20.1 seconds)');
    await h.clock.advance(0);
    const hints = h.events.filter((e) => e.event === 'hint') as Extract<UpEvent, { event: 'hint' }>[];
    expect(hints.map((x) => [x.process, x.code])).toEqual([['frontend', 'kv_event_publisher_disabled'], ['agg-0', 'hf.lock-wait']]);
    expect(hints[1].text).toContain('held by pid 4242 (python3 download.py)');

    void h.sup.stop('SIGTERM');
    await h.clock.advance(0);
    expect(h.events.find((e) => e.event === 'stopping')).toMatchObject({ reason: 'teardown', by: 'pid 77', targets: [{ name: 'frontend' }, { name: 'agg-0' }] });
    await h.clock.advance(500);
    expect(h.events.some((e) => e.event === 'stop-progress')).toBe(true);
    expect(h.events.some((e) => e.event === 'stopped')).toBe(true);
  });
});

describe('mocker readiness: through the frontend (the real mocker\'s /health never says ready, FACTS §4)', () => {
  const mockerWorker = (name: string, port: number): PlannedProcess => ({
    ...worker(name, port, []), argv: ['python3', '-m', 'dynamo.mocker'], gpuMemoryUtilization: null, ready: { viaFrontend: true },
  });
  const mockerPlan: Plan = {
    ...plan, recipe: 'mocker', engine: 'mocker',
    processes: [
      {
        ...worker('frontend', 0, []), role: 'frontend', gpuMemoryUtilization: null,
        ready: { http: 'http://f/v1/models', modelReady: 'http://f/v1/models/m/ready', workers: 2, completion: true },
      },
      mockerWorker('agg-0', 8081),
      mockerWorker('agg-1', 8082),
    ],
  };
  const json = (url: string, status: number, body: unknown): HttpProbe => ({ url, ok: status < 400, status, body, error: null });
  const readyBody = (workers: number) => ({ model: 'm', ready: workers > 0, namespaces: { dynamo: { ready: workers > 0, worker_types: { aggregated: { workers, needs: [] } } } } });

  function mockerHarness(readyTimeoutMs = 60_000) {
    let counted = 0;
    const posts: unknown[] = [];
    let answers = false;
    const h = harness({
      plan: mockerPlan,
      readyTimeoutMs,
      get: (url) => {
        if (url === 'http://f/v1/models') return json(url, 200, { object: 'list', data: counted > 0 ? [{ id: 'm' }] : [] });
        if (url === 'http://f/v1/models/m/ready') return json(url, counted > 0 ? 200 : 404, counted > 0 ? readyBody(counted) : { message: 'Model not found' });
        if (url.endsWith('/health')) throw new Error(`a mocker's /health was asked: ${url}`);
        return undefined;
      },
      post: (url, body) => {
        posts.push(body);
        return answers ? json(url, 200, { choices: [{ index: 0, message: { role: 'assistant', content: 'x' } }] }) : json(url, 503, { error: 'no instances' });
      },
    });
    return { h, setCounted: (n: number) => void (counted = n), setAnswers: (a: boolean) => void (answers = a), posts };
  }

  it('workers start together, show loading from the real "Creating mocker engine" line, and are ready once the frontend counts both and answers a completion', async () => {
    const { h, setCounted, setAnswers, posts } = mockerHarness();
    void h.sup.run();
    await h.clock.advance(0);
    expect(h.states()).toEqual({ frontend: 'loading', 'agg-0': 'starting', 'agg-1': 'starting' });
    h.lines.get('agg-0')!('2026-12-01T06:02:10.887589Z  INFO dynamo_llm::mocker: Creating mocker engine with config: MockerConfig { }');
    expect(h.states()['agg-0']).toBe('loading');

    setCounted(1); // listed, but /ready counts one of two workers
    await h.clock.advance(500);
    expect(h.states()).toEqual({ frontend: 'loading', 'agg-0': 'loading', 'agg-1': 'starting' });
    expect(posts).toEqual([]);

    setCounted(2); // both counted: now one completion, which first fails (no route yet), then answers
    await h.clock.advance(200);
    expect(posts).toEqual([{ model: 'm', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: false }]);
    expect(h.events.some((e) => e.event === 'ready')).toBe(false);
    setAnswers(true);
    await h.clock.advance(300);
    expect(h.states()).toEqual({ frontend: 'ready', 'agg-0': 'ready', 'agg-1': 'ready' });
    expect(h.events.find((e) => e.event === 'ready')).toMatchObject({ workers: [{ name: 'agg-0', health: null }, { name: 'agg-1', health: null }] });
    void h.sup.stop('SIGINT');
    await h.clock.advance(400);
  });

  it('the deadline names the worker the frontend does not count, and how many it sees', async () => {
    const { h, setCounted } = mockerHarness(5000);
    const running = h.sup.run();
    setCounted(1);
    await h.clock.advance(5000);
    await h.clock.advance(400);
    const r = await running;
    expect(r).toEqual({
      outcome: 'failed', code: 1,
      reason: 'not ready after 5 s: agg-0 is still not counted by the frontend, which is counting workers: it sees 1 of 2',
    });
  });
});
