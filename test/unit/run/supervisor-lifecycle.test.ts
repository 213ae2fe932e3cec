import { describe, expect, it } from 'vitest';
import type { SupervisorResult } from '../../../src/run/supervisor.js';
import { TEARDOWN_ENDED } from '../../../src/run/supervisor.js';
import type { Diagnosis } from '../../../src/run/diagnosis.js';
import { basePlan, KV_LINE, plannedWorker, supervisorHarness } from '../../helpers/supervisor-harness.js';

// One `up` from start to stop with every dependency faked (test/helpers/supervisor-harness.ts): what
// the user sees in events and what run.json says at each step, on the rare paths of the lifecycle.

const settle = () => new Promise<void>((r) => setImmediate(r));

describe('what the run shows while it starts', () => {
  it('a failed process shows exactly its last 20 log lines, ANSI colours removed', async () => {
    const h = supervisorHarness();
    const running = h.sup.run();
    await h.clock.advance(0);
    for (let i = 1; i <= 25; i++) h.lines.get('agg-0')!(`\u001b[32mline ${i}\u001b[0m`);
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(500);
    const want = Array.from({ length: 20 }, (_, i) => `line ${i + 6}`);
    expect(h.of('exited')[0]).toMatchObject({ process: 'agg-0', code: 1, afterReady: false, lastLines: want, log: '/state/runs/r1/logs/agg-0.log' });
    expect(h.of('failed')[0].lastLines).toEqual(want);
    expect(await running).toEqual({ outcome: 'failed', code: 1, reason: 'agg-0 exited with code 1 before it was ready' });
  });

  it('a process with exactly 20 lines shows all of them', async () => {
    const h = supervisorHarness();
    void h.sup.run();
    await h.clock.advance(0);
    for (let i = 1; i <= 20; i++) h.lines.get('agg-0')!(`line ${i}`);
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 2, signal: null, error: null });
    await h.clock.advance(500);
    expect(h.of('exited')[0].lastLines).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i + 1}`));
  });

  it('each worker\'s KV line time is measured from its own start; ready time from the start of up', async () => {
    const h = supervisorHarness({ startAt: 1000 }); // the clock had run before up made its supervisor
    void h.sup.run();
    await h.clock.advance(300);
    h.lines.get('agg-0')!(KV_LINE); // agg-0 started at 1000; agg-1 starts now, at 1300
    await h.clock.advance(700);
    h.lines.get('agg-1')!(KV_LINE);
    ['http://w/8081/health', 'http://w/8082/health', 'http://f/v1/models'].forEach((u) => h.healthy.add(u));
    await h.clock.advance(100);
    expect(h.of('log-ready').map((e) => [e.process, e.kvTokens, e.ms])).toEqual([['agg-0', 14_816, 300], ['agg-1', 14_816, 700]]);
    const ready = h.of('ready')[0];
    expect(ready.ms).toBeGreaterThanOrEqual(1050);
    expect(ready.ms).toBeLessThanOrEqual(1100);
    expect(ready).toMatchObject({ url: 'http://f', model: 'm', detached: false, logs: { frontend: '/state/runs/r1/logs/frontend.log', 'agg-0': '/state/runs/r1/logs/agg-0.log', 'agg-1': '/state/runs/r1/logs/agg-1.log' } });
    expect(ready.curl).toContain('curl -s http://f/v1/chat/completions');
    expect(ready.workers).toEqual([
      { name: 'agg-0', role: 'agg', kvTokens: 14_816, gpuMemoryUtilization: 0.4, log: '/state/runs/r1/logs/agg-0.log', health: 'http://w/8081/health' },
      { name: 'agg-1', role: 'agg', kvTokens: 14_816, gpuMemoryUtilization: 0.4, log: '/state/runs/r1/logs/agg-1.log', health: 'http://w/8082/health' },
    ]);
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });

  it('the per-run discovery folders exist before any process starts, each once', async () => {
    const env = { DYN_FILE_KV: '/state/runs/r1/discovery' };
    const plan = { ...basePlan, processes: basePlan.processes.map((p) => ({ ...p, env: p.name === 'agg-1' ? {} : env })) };
    const h = supervisorHarness({ plan });
    void h.sup.run();
    await h.clock.advance(0);
    expect(h.calls.slice(0, 2)).toEqual(['mkdir /state/runs/r1/discovery', 'spawn frontend']);
    expect(h.calls.filter((c) => c.startsWith('mkdir'))).toHaveLength(1);
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });
});

describe('a process that cannot start', () => {
  it('the failure says it could not be started and points at the interpreter; nothing else is left running', async () => {
    const h = supervisorHarness({ spawnAs: (name) => (name === 'agg-0' ? {} : undefined) });
    const running = h.sup.run();
    await h.clock.advance(0);
    expect(h.of('starting').find((e) => e.process === 'agg-0')).toMatchObject({ pid: null });
    h.exits.get('agg-0')!({ code: null, signal: null, error: 'cannot start python3: no such program (not found on PATH)' });
    await h.clock.advance(500);
    const r = await running;
    expect(r).toEqual({ outcome: 'failed', code: 1, reason: 'agg-0 could not be started: cannot start python3: no such program (not found on PATH)' });
    expect(h.of('failed')[0]).toMatchObject({ process: 'agg-0', hint: 'check the interpreter: --python PATH, $DYNAMO_DEV_PYTHON or the recipe\'s python (now python3)' });
    expect(h.of('exited')[0]).toMatchObject({ error: 'cannot start python3: no such program (not found on PATH)', code: null, signal: null });
    // The frontend was stopped; the never-started agg-0 is no stop target and stays failed.
    expect(h.of('stopping')[0].targets.map((t) => t.name)).toEqual(['frontend']);
    expect(h.machine.alive(100)).toBe(false);
    expect(h.states()).toEqual({ frontend: 'stopped', 'agg-0': 'failed', 'agg-1': 'stopped' });
  });
});

describe('failures and their diagnosis', () => {
  const oom: Diagnosis = { id: 'cuda-oom', title: 'CUDA out of memory', explanation: 'x', fix: 'y', line: 3, text: 'torch.OutOfMemoryError' } as unknown as Diagnosis;

  it('a worker that dies is diagnosed from its own log (after its last lines are read), and the diagnosis is in both events', async () => {
    const asked: string[] = [];
    const h = supervisorHarness({ deps: { diagnose: async (log) => (asked.push(log), { top: log.endsWith('agg-0.log') ? oom : null }) } });
    void h.sup.run();
    await h.clock.advance(0);
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(500);
    expect(asked).toEqual(['/state/runs/r1/logs/agg-0.log']);
    expect(h.drains[0]).toBe('agg-0');
    expect(h.of('exited')[0].diagnosis).toBe(oom);
    expect(h.of('failed')[0].diagnosis).toBe(oom);
  });

  it('the ready deadline diagnoses the process it blames, and says what hid its KV line', async () => {
    const asked: string[] = [];
    const h = supervisorHarness({ readyTimeoutMs: 3000, env: { VLLM_LOGGING_LEVEL: 'WARNING' }, deps: { diagnose: async (log) => (asked.push(log), { top: oom }) } });
    const running = h.sup.run();
    await h.clock.advance(3000);
    await h.clock.advance(500);
    expect((await running as Extract<SupervisorResult, { outcome: 'failed' }>).reason).toBe('not ready after 3 s: agg-0 is still starting (nothing useful logged yet)');
    expect(asked).toEqual(['/state/runs/r1/logs/agg-0.log']);
    expect(h.drains).toContain('agg-0');
    expect(h.of('failed')[0]).toMatchObject({
      process: 'agg-0', diagnosis: oom,
      hint: 'VLLM_LOGGING_LEVEL=WARNING hides vLLM\'s INFO line "GPU KV cache size: N tokens" that readiness waits for: unset it or set it to INFO',
    });
  });

  it('an unexpected error stops everything with the error in the reason, with no process blamed and nothing diagnosed', async () => {
    const asked: string[] = [];
    const h = supervisorHarness({ deps: { diagnose: async (log) => (asked.push(log), { top: null }) } });
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.crash('a string, not an Error');
    await h.clock.advance(500);
    expect(await running).toEqual({ outcome: 'failed', code: 1, reason: 'unexpected error: a string, not an Error' });
    expect(h.of('failed')[0]).toMatchObject({ process: null, diagnosis: null, hint: null, lastLines: [], log: null });
    expect(asked).toEqual([]);
    expect(h.sup.record.state).toBe('failed');
  });

  it('a second failure while the first is being handled changes nothing', async () => {
    const h = supervisorHarness();
    const running = h.sup.run();
    await h.clock.advance(0);
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0); // the stop after the failure has begun
    void h.sup.crash(new Error('late'));
    await h.clock.advance(500);
    expect((await running as Extract<SupervisorResult, { outcome: 'failed' }>).reason).toBe('agg-0 exited with code 1 before it was ready');
    expect(h.of('failed')).toHaveLength(1);
  });
});

describe('a listener that throws', () => {
  it('never stops supervision: the warning names the event and the error (an Error\'s message, anything else as text)', async () => {
    const h = supervisorHarness();
    let n = 0;
    h.sup.on('event', (e: { event: string }) => {
      if (e.event === 'starting') throw n++ === 0 ? new Error('terminal gone') : 'plain text';
    });
    void h.sup.run();
    await h.clock.advance(0);
    expect(h.warnings).toEqual(['cannot show the starting event: terminal gone', 'cannot show the starting event: plain text']);
    expect(h.states()).toMatchObject({ frontend: 'loading', 'agg-0': 'starting' });
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });

  it('even when the warning listener throws too', async () => {
    const h = supervisorHarness();
    h.sup.on('event', () => {
      throw new Error('gone');
    });
    h.sup.on('warning', () => {
      throw new Error('also gone');
    });
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 0, signal: 'SIGINT' });
  });
});

describe('stopping', () => {
  it('a user stop before anything started: no stop targets, no stopping line, every process recorded stopped', async () => {
    // Each waits for the other (a plan validation would refuse it; the supervisor must still stop cleanly).
    const plan = { ...basePlan, processes: [plannedWorker('agg-0', 8081, ['agg-1']), plannedWorker('agg-1', 8082, ['agg-0'])] };
    const h = supervisorHarness({ plan });
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.stop('SIGTERM');
    await h.clock.advance(0);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 0, signal: 'SIGTERM' });
    expect(h.of('stopping')).toEqual([]);
    expect(h.of('stopped')[0]).toMatchObject({ reason: 'user', stopped: [], remaining: [] });
    expect(h.calls.filter((c) => c.startsWith('stop'))).toEqual([]);
    expect(h.calls.filter((c) => c.startsWith('spawn'))).toEqual([]);
    expect(h.states()).toEqual({ 'agg-0': 'stopped', 'agg-1': 'stopped' });
    expect(h.snapshots.at(-1)).toBe('stopped: agg-0=stopped,agg-1=stopped');
  });

  it('waiting processes are recorded stopped as the stop begins; started ones once they are gone', async () => {
    const h = supervisorHarness({ graceMs: 5000 });
    void h.sup.run();
    await h.clock.advance(0);
    h.machine.remove(100);
    h.machine.add({ pid: 100, ppid: 11, pgid: 100, startTicks: 1100, cmd: 'slow', termExitMs: 200 });
    void h.sup.stop('SIGINT');
    await h.clock.advance(0);
    expect(h.snapshots.find((s) => s.startsWith('stopping'))).toBe('stopping: frontend=loading,agg-0=starting,agg-1=stopped');
    expect(h.states()['agg-1']).toBe('stopped');
    expect(h.of('stopping')[0]).toMatchObject({ reason: 'user', by: null, targets: [{ name: 'frontend', pid: 100 }, { name: 'agg-0', pid: 101 }] });
    await h.clock.advance(600);
    expect(h.states()).toEqual({ frontend: 'stopped', 'agg-0': 'stopped', 'agg-1': 'stopped' });
  });

  it('the stopping line tells when SIGKILL is due: now plus the grace, or now once escalated', async () => {
    const h = supervisorHarness({ graceMs: 7000 });
    void h.sup.run();
    await h.clock.advance(0);
    const before = Date.now();
    void h.sup.stop('SIGINT');
    await settle();
    const killAt = h.of('stopping')[0].killAt;
    expect(killAt).toBeGreaterThanOrEqual(before + 7000);
    expect(killAt).toBeLessThanOrEqual(Date.now() + 7000);
    await h.clock.advance(500);

    const e = supervisorHarness({ graceMs: 7000 });
    void e.sup.run();
    await e.clock.advance(0);
    for (const pid of [100, 101]) {
      e.machine.remove(pid);
      e.machine.add({ pid, ppid: 11, pgid: pid, startTicks: 1000 + pid, cmd: 'stubborn', termExitMs: null });
    }
    e.sup.escalate(); // a second Ctrl-C before the stop began (a failure still reading its log)
    const t = Date.now();
    void e.sup.stop('SIGINT');
    await settle();
    expect(e.of('stopping')[0].killAt).toBeLessThan(t + 1000);
    await e.clock.advance(100);
    expect(e.machine.signals.filter((s) => s.sig === 'SIGKILL').map((s) => s.t)).toEqual([0, 0]);
  });

  it('a second stop while stopping is ignored; escalate() before any stop handle is harmless', async () => {
    const h = supervisorHarness();
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    void h.sup.stop('SIGHUP');
    await h.clock.advance(500);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 0, signal: 'SIGINT' });
    expect(h.of('stopped')).toHaveLength(1);
  });

  it('a process that survives SIGKILL makes the stop a failed one (exit 1), and is named', async () => {
    const h = supervisorHarness({ graceMs: 100 });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.machine.add({ pid: 150, ppid: 101, pgid: 101, startTicks: 1150, cmd: 'VLLM::EngineCore', termExitMs: null, unkillable: true });
    void h.sup.stop('SIGINT');
    await h.clock.advance(3000);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 1, signal: 'SIGINT' });
    expect(h.of('stopped')[0].remaining).toEqual([{ name: 'agg-0', pid: 150, cmd: 'VLLM::EngineCore', startTicks: 1150, state: 'S' }]);
  });

  it('a process that exits while the run is stopping is recorded stopped, not failed', async () => {
    const h = supervisorHarness({ graceMs: 5000 });
    void h.sup.run();
    await h.clock.advance(0);
    h.machine.remove(101);
    h.machine.add({ pid: 101, ppid: 11, pgid: 101, startTicks: 1101, cmd: 'stubborn', termExitMs: null });
    void h.sup.stop('SIGINT');
    await h.clock.advance(50);
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 0, signal: null, error: null });
    await h.clock.advance(0);
    expect(h.states()['agg-0']).toBe('stopped');
    expect(h.of('exited')).toEqual([]);
    await h.clock.advance(500);
  });

  it('a process killed by `teardown` before its SIGTERM reached us is a stop by teardown, not a failure', async () => {
    let asked = false;
    const h = supervisorHarness({ stopRequest: () => (asked ? 'pid 4321' : null) });
    const running = h.sup.run();
    await h.clock.advance(0);
    asked = true;
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: null, signal: 'SIGTERM', error: null });
    await h.clock.advance(500);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 0, signal: 'SIGTERM' });
    expect(h.states()['agg-0']).toBe('stopped');
    expect(h.of('failed')).toEqual([]);
    expect(h.of('exited')).toEqual([]);
    expect(h.of('stopping')[0]).toMatchObject({ reason: 'teardown', by: 'pid 4321' });
    // Counted among what teardown stopped (the foreground's "stopped 3 processes by dynamo-dev
    // teardown"), not as a process our stop found gone: it ended on teardown's SIGTERM.
    const ended = (h.of('stopped')[0] as { stopped: { name: string; signal: string | null; note?: string }[] }).stopped;
    expect(ended.find((r) => r.name === 'agg-0')).toMatchObject({ signal: 'SIGTERM', note: TEARDOWN_ENDED });
    expect(ended.find((r) => r.name === 'frontend')).toMatchObject({ signal: 'SIGTERM' });
    expect(ended.find((r) => r.name === 'frontend')!.note).toBeUndefined();
  });

  it("a process teardown's SIGTERM ended after ours reached the supervisor (our stop finds it gone) is counted as stopped by teardown", async () => {
    const h = supervisorHarness({ stopRequest: () => 'pid 4321' });
    const running = h.sup.run();
    await h.clock.advance(0);
    // teardown signals us, then agg-0; agg-0 dies of it before our SIGTERM handler runs, and its
    // exit reaches us only after our stop has begun: the stop finds it gone.
    h.machine.remove(101);
    void h.sup.stop('SIGTERM');
    h.exits.get('agg-0')!({ code: null, signal: 'SIGTERM', error: null });
    await h.clock.advance(500);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 0 });
    const ended = (h.of('stopped')[0] as { reason: string; stopped: { name: string; signal: string | null; note?: string }[] }).stopped;
    expect(ended.find((r) => r.name === 'agg-0')).toMatchObject({ signal: 'SIGTERM', note: TEARDOWN_ENDED });
    expect(ended.filter((r) => r.signal !== null)).toHaveLength(ended.length);
  });

  it('the same process found gone by a stop the user asked for (no teardown) is not credited to teardown', async () => {
    const h = supervisorHarness({ stopRequest: () => null });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.machine.remove(101);
    void h.sup.stop('SIGINT');
    h.exits.get('agg-0')!({ code: null, signal: 'SIGTERM', error: null });
    await h.clock.advance(500);
    await running;
    const ended = (h.of('stopped')[0] as { stopped: { name: string; signal: string | null; note?: string }[] }).stopped;
    expect(ended.find((r) => r.name === 'agg-0')).toMatchObject({ signal: null, note: 'already gone' });
  });

  it('what the run marker still finds after the recorded stop is stopped alone, in up to two more passes', async () => {
    const finds = [
      [{ pid: 300, startTicks: 3000, cmd: 'VLLM::Worker' }],
      [{ pid: 301, startTicks: 3010, cmd: 'helper-daemon --x' }],
      [{ pid: 302, startTicks: 3020, cmd: 'third' }],
    ];
    const minTicks: number[] = [];
    const h = supervisorHarness({
      graceMs: 100,
      deps: {
        marked: async (marker, min) => {
          expect(marker).toBe('/real/state/runs/r1');
          minTicks.push(min);
          return finds.shift() ?? [];
        },
      },
    });
    for (const p of [300, 301, 302]) h.machine.add({ pid: p, ppid: 1, pgid: p, startTicks: 3000 + (p - 300) * 10, cmd: 'x', termExitMs: 0 });
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    await h.clock.advance(1000);
    await running;
    expect(h.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop frontend,agg-0', 'stop VLLM::Worker', 'stop helper-daemon']);
    expect(minTicks).toEqual([6, 6]);
    expect(h.of('stopped')[0].stopped.map((s) => s.name)).toEqual(['frontend', 'agg-0', 'VLLM::Worker', 'helper-daemon']);
    expect(h.machine.signalsTo(300)).toEqual([{ t: expect.any(Number), pid: 300, sig: 'SIGTERM' }]);
    expect(h.machine.alive(302)).toBe(true); // a third pass is not made
  });

  it('a marked process that already survived SIGKILL is not stopped again', async () => {
    const h = supervisorHarness({
      graceMs: 100,
      deps: { marked: async () => [{ pid: 150, startTicks: 1150, cmd: 'VLLM::EngineCore' }] },
    });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.machine.add({ pid: 150, ppid: 101, pgid: 101, startTicks: 1150, cmd: 'VLLM::EngineCore', termExitMs: null, unkillable: true });
    void h.sup.stop('SIGINT');
    await h.clock.advance(3000);
    await running;
    expect(h.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop frontend,agg-0']);
    expect(h.of('stopped')[0].remaining.map((r) => r.pid)).toEqual([150]);
  });

  it('an escalated stop SIGKILLs what the run marker finds at once too', async () => {
    const h = supervisorHarness({ graceMs: 10_000, deps: { marked: (() => { let n = 0; return async () => (n++ === 0 ? [{ pid: 300, startTicks: 3000, cmd: 'x' }] : []); })() } });
    h.machine.add({ pid: 300, ppid: 1, pgid: 300, startTicks: 3000, cmd: 'x', termExitMs: null });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.sup.escalate();
    void h.sup.stop('SIGINT');
    await h.clock.advance(1000);
    await running;
    expect(h.machine.signalsTo(300).map((s) => [s.t, s.sig])).toEqual([[0, 'SIGTERM'], [0, 'SIGKILL']]);
  });
});

describe('after the stop', () => {
  it('a process whose exit is never reported holds the end of the stop up for 300 ms at most; no timer is left behind', async () => {
    const h = supervisorHarness({
      // agg-0 runs in the fake machine, but its exit never reaches the supervisor.
      spawnAs: (name) => (name === 'agg-0' ? { pid: 150, pgid: 150, startTicks: 1150, exited: new Promise(() => {}) } : undefined),
    });
    h.machine.add({ pid: 150, ppid: 11, pgid: 150, startTicks: 1150, cmd: 'python3 -m dynamo.vllm' });
    let result: unknown = null;
    void h.sup.run().then((r) => (result = r));
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    await h.clock.advance(15); // the group is gone at the first look
    expect(h.machine.alive(150)).toBe(false);
    await h.clock.advance(299);
    expect(result).toBeNull();
    await h.clock.advance(1);
    expect(result).toMatchObject({ outcome: 'stopped', code: 0 });
    expect(h.clock.pending).toBe(0);
    expect(h.writes.at(-1)).toBe('stopped');
    expect(h.states()).toEqual({ frontend: 'stopped', 'agg-0': 'stopped', 'agg-1': 'stopped' });
  });

  it('when every exit is reported, the stop ends without waiting out those 300 ms', async () => {
    const h = supervisorHarness();
    let result: unknown = null;
    void h.sup.run().then((r) => (result = r));
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    await h.clock.advance(15);
    expect(result).toMatchObject({ outcome: 'stopped', code: 0, signal: 'SIGINT' });
    expect(h.clock.pending).toBe(0);
    const stopped = h.of('stopped')[0];
    expect(stopped).toMatchObject({ runId: 'r1', reason: 'user', remaining: [] });
    expect(stopped.stopped.map((r) => [r.name, r.signal])).toEqual([['frontend', 'SIGTERM'], ['agg-0', 'SIGTERM']]);
  });

  it('once ready, the ready deadline no longer matters', async () => {
    const h = supervisorHarness({ readyTimeoutMs: 5000 });
    void h.sup.run();
    await h.allReady();
    expect(h.clock.pending).toBe(1); // the rare engine re-scan only: the deadline timer is gone
    await h.clock.advance(10_000);
    expect(h.of('failed')).toEqual([]);
    expect(h.sup.record.state).toBe('ready');
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });
});

describe('the Hugging Face lock after another worker loaded the model', () => {
  const lockLine = '2026-10-07T04:58:21.118004Z  INFO filelock: Still waiting to acquire lock on /hf/.locks/x.lock (elapsed: 10.1 seconds)';

  it('a worker still waiting for the download lock once another has its KV cache fails the run, naming the lock', async () => {
    const h = supervisorHarness();
    const running = h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(KV_LINE); // agg-0 has loaded the model; agg-1 starts
    await h.clock.advance(0);
    h.lines.get('agg-1')!(lockLine);
    await h.clock.advance(500);
    expect(await running).toEqual({ outcome: 'failed', code: 1, reason: 'agg-1 is blocked on the Hugging Face download lock /hf/.locks/x.lock' });
    expect(h.of('failed')[0].hint).toMatch(/^agg-0 already loaded m, so the download is finished/);
    expect(h.of('hint')).toEqual([]);
  });

  it('while no other worker has loaded it, the wait is only a hint', async () => {
    const h = supervisorHarness();
    void h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(lockLine);
    await h.clock.advance(0);
    expect(h.of('failed')).toEqual([]);
    expect(h.of('hint').map((e) => e.code)).toEqual(['hf.lock-wait']);
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });
});

describe('the deadline hint about the logging level', () => {
  it('not given when the worker did log its KV line (it is stuck on its health, not on a hidden line)', async () => {
    const h = supervisorHarness({ readyTimeoutMs: 3000, env: { VLLM_LOGGING_LEVEL: 'ERROR' } });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(KV_LINE);
    await h.clock.advance(3000);
    await h.clock.advance(500);
    expect((await running as Extract<SupervisorResult, { outcome: 'failed' }>).reason).toMatch(/^not ready after 3 s: agg-0 is still not answering ready/);
    expect(h.of('failed')[0].hint).toBeNull();
  });

  it('the process\'s own env is read too (a level set only for that worker)', async () => {
    const plan = { ...basePlan, processes: basePlan.processes.map((p) => (p.name === 'agg-0' ? { ...p, env: { VLLM_LOGGING_LEVEL: 'WARNING' } } : p)) };
    const h = supervisorHarness({ readyTimeoutMs: 3000, plan });
    const running = h.sup.run();
    await h.clock.advance(3000);
    await h.clock.advance(500);
    await running;
    expect(h.of('failed')[0].hint).toMatch(/^VLLM_LOGGING_LEVEL=WARNING hides/);
  });
});
