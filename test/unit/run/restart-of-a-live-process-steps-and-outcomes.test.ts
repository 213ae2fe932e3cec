import { describe, expect, it } from 'vitest';
import type { RestartEvent } from '../../../src/run/restart-request.js';
import type { RestartRequest } from '../../../src/run/restart-request.js';
import { takeRestartRequests } from '../../../src/run/process-restart.js';
import { endedWords } from '../../../src/run/ended.js';
import { policyText } from '../../../src/run/policy/restart-policy.js';
import { formatRestartStep } from '../../../src/ui/restart-report.js';
import { KV_LINE, basePlan, supervisorHarness, type HarnessOptions } from '../../helpers/supervisor-harness.js';

// `dynamo-dev restart <process>` of a live run, step by step against the fake machine and clock:
// what it refuses, the lines it prints, the marker in the log, what the record keeps, when it is
// ready again (the frontend counting the worker again), and each way it ends otherwise: an exit
// while starting, its own deadline, the run stopped meanwhile, a process that outlives SIGKILL.

const LOG = '/state/runs/r1/logs/agg-1.log';
const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

/** A watched, detached run of basePlan brought to ready; `at` records when each step was told. */
async function readyRun(o: HarnessOptions = {}) {
  const marks: string[] = [];
  const h = supervisorHarness({ detach: true, watch: true, ...o, deps: { appendLog: (path, line) => (marks.push(`${path}: ${line}`), 0), ...o.deps } });
  void h.sup.run();
  await h.allReady();
  expect(h.sup.record.state).toBe('ready');
  const steps: RestartEvent[] = [];
  const at: number[] = [];
  const note = (e: RestartEvent) => {
    steps.push(e);
    at.push(h.clock.now());
  };
  const lines = () => steps.map((e) => formatRestartStep(e)).filter((l) => l !== null).map((l) => l!.trim());
  return { h, marks, steps, at, note, lines };
}

describe('a restart refused: one done event, nothing stopped or started', () => {
  it('before the run has been ready', async () => {
    const h = supervisorHarness({ detach: true, watch: true });
    void h.sup.run();
    await h.clock.advance(0);
    const steps: RestartEvent[] = [];
    const d = await h.sup.restart('agg-0', { graceMs: 1000, readyTimeoutMs: 0 }, (e) => void steps.push(e));
    expect(d).toEqual({
      event: 'done', ok: false, process: 'agg-0', reason: 'the run is still starting; a process can be restarted once the run has been ready',
      diagnosis: null, lastLines: [], log: null, runState: 'starting',
    });
    expect(steps).toEqual([d]);
    expect(h.calls.filter((c) => c.startsWith('stop'))).toEqual([]);
  });

  it('a process the run does not have', async () => {
    const { h, steps, note } = await readyRun();
    const d = await h.sup.restart('agg-7', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    expect(d).toEqual({ event: 'done', ok: false, process: 'agg-7', reason: 'no process "agg-7" in this run', diagnosis: null, lastLines: [], log: null, runState: 'ready' });
    expect(steps).toEqual([d]);
  });

  it('while the run stops', async () => {
    const { h, steps, note } = await readyRun();
    void h.sup.stop('SIGTERM');
    const d = await h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    expect(d).toMatchObject({ event: 'done', ok: false, process: 'agg-1', reason: 'the run is stopping', lastLines: [], log: null });
    expect(steps).toEqual([d]);
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(1);
  });
});

describe('a restart of a running worker that comes back', () => {
  it('prints each step, marks the log, and is ready only once the frontend counts it again', async () => {
    const { h, marks, steps, at, note, lines } = await readyRun();
    const t0 = h.clock.now();
    const stopsBefore = h.followerStops.filter((n) => n === 'agg-1').length;
    let atStart: unknown = null;
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, (e) => {
      note(e);
      if (e.event === 'starting') atStart = JSON.parse(JSON.stringify(h.sup.record.processes[2]));
    });
    expect(h.sup.record.state).toBe('degraded');
    await h.clock.advance(400);
    expect(lines()).toEqual([
      'stopped agg-1 (pid 102) with SIGTERM in 15 ms',
      expect.stringMatching(new RegExp(`^started agg-1 \\(pid 103\\); its log continues after the line "--- dynamo-dev restart ${ISO}: agg-1 stopped and started again \\(restart 1\\) ---"$`)),
    ]);
    const marker = (steps.find((e) => e.event === 'starting') as Extract<RestartEvent, { event: 'starting' }>).marker;
    expect(marks).toEqual([`${LOG}: ${marker}`]);
    expect(atStart).toMatchObject({ pid: 103, state: 'starting', restarts: 1, descendants: [], exitCode: null, signal: null, kvTokens: null, diagnosis: null, stop: null });
    // Its KV line and health, but the frontend no longer lists the model: not ready again yet.
    h.healthy.delete('http://f/v1/models');
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(2000);
    expect(steps.map((e) => e.event)).toEqual(['taken', 'stopped', 'starting', 'log-ready']);
    h.healthy.add('http://f/v1/models');
    await h.clock.advance(500);
    const d = await done;
    expect(steps.map((e) => e.event)).toEqual(['taken', 'stopped', 'starting', 'log-ready', 'counted', 'done']);
    expect(steps[0]).toEqual({ event: 'taken', process: 'agg-1', pid: 102 });
    expect(steps[4]).toEqual({ event: 'counted', process: 'agg-1', by: 'frontend' });
    expect(d).toEqual({ event: 'done', ok: true, process: 'agg-1', ms: at[5] - t0, runState: 'ready' });
    expect(d.ok && d.ms).toBeGreaterThan(2000);
    expect(h.sup.record.state).toBe('ready');
    expect(h.sup.record.processes[2]).toMatchObject({ state: 'ready', restarts: 1 });
    expect(h.sup.record.processes[2].restartHistory).toEqual([{ at: expect.stringMatching(new RegExp(`^${ISO}$`)), by: 'command', cause: null, exitCode: null, signal: null, diagnosis: null, outcome: 'ready' }]);
    // Watched: its log follower stops once it is ready again (one stop before its start, one after).
    expect(h.followerStops.filter((n) => n === 'agg-1').length).toBe(stopsBefore + 2);
  });

  it('unwatched, its follower is left running once ready', async () => {
    const { h, note } = await readyRun({ watch: false, detach: false });
    const stopsBefore = h.followerStops.filter((n) => n === 'agg-1').length;
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(400);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ ok: true, runState: 'ready' });
    expect(h.followerStops.filter((n) => n === 'agg-1').length).toBe(stopsBefore + 1);
  });

  it('another process still down: ready again, but the run stays degraded', async () => {
    const { h, note } = await readyRun();
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0);
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(400);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ ok: true, process: 'agg-1', runState: 'degraded' });
    expect(h.sup.record.state).toBe('degraded');
  });

  it('a pid found gone that never reported its exit: said, and its exit waited for 300 ms before the start', async () => {
    const { h, at, steps, note, lines } = await readyRun();
    h.machine.remove(102);
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(1000);
    expect(lines()[0]).toBe('agg-1 (pid 102): already gone');
    const stopped = at[steps.findIndex((e) => e.event === 'stopped')];
    const started = at[steps.findIndex((e) => e.event === 'starting')];
    expect(started - stopped).toBe(300);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ ok: true });
  });

  it('its leader gone but its group alive (an engine core): the group is stopped, and the line says why', async () => {
    const engine = { pid: 900, startTicks: 2900, cmd: 'VLLM::EngineCore' };
    const { h, note, lines } = await readyRun({ deps: { descendants: (pid) => (pid === 102 ? [engine] : []) } });
    h.machine.add({ ...engine, ppid: 102, pgid: 102 });
    h.machine.remove(102);
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(1000);
    expect(h.machine.alive(900)).toBe(false);
    expect(lines().filter((l) => l.startsWith('stopped agg-1'))).toEqual([expect.stringMatching(/^stopped agg-1 \(pid \d+\) with SIGTERM in \d+ ms \(.+\)$/)]);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ ok: true });
  });

  it('a log that cannot be marked: a warning naming the log, and the restart goes on', async () => {
    const { h, note } = await readyRun({ deps: { appendLog: () => { throw new Error('ENOSPC: no space left on device'); } } });
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(400);
    expect(h.warnings).toContain(`cannot mark the restart in ${LOG}: ENOSPC: no space left on device`);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ ok: true });
  });
});

describe('a restart of a worker with no ready signal of its own (the mocker)', () => {
  it('is ready again when the frontend counts it, not before', async () => {
    const plan = { ...basePlan, processes: basePlan.processes.map((q) => (q.name === 'frontend' ? q : { ...q, waitFor: [], ready: { viaFrontend: true } })) };
    const h = supervisorHarness({ detach: true, watch: true, plan, deps: { appendLog: () => 0 } });
    void h.sup.run();
    h.healthy.add('http://f/v1/models');
    await h.clock.advance(1000);
    expect(h.sup.record.state).toBe('ready');
    expect(h.sup.record.processes[2]).toMatchObject({ state: 'ready', pid: 102 });
    const steps: RestartEvent[] = [];
    h.healthy.delete('http://f/v1/models');
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, (e) => void steps.push(e));
    await h.clock.advance(3000);
    expect(steps.map((e) => e.event)).toEqual(['taken', 'stopped', 'starting']);
    expect(h.sup.record.processes[2].state).toBe('starting');
    h.healthy.add('http://f/v1/models');
    await h.clock.advance(1000);
    expect(await done).toMatchObject({ ok: true, process: 'agg-1', runState: 'ready' });
    expect(steps.map((e) => e.event)).toEqual(['taken', 'stopped', 'starting', 'counted', 'done']);
    expect(h.sup.record.processes[2].state).toBe('ready');
  });
});

describe('a second ask while one is under way', () => {
  it('follows the first: says so, and both get the same done, each once', async () => {
    const { h, note } = await readyRun();
    const first: RestartEvent[] = [];
    const second: RestartEvent[] = [];
    const a = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, (e) => void first.push(e));
    const b = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, (e) => void second.push(e));
    void note;
    await h.clock.advance(400);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    const [da, db] = await Promise.all([a, b]);
    expect(db).toEqual(da);
    expect(second.map((e) => formatRestartStep(e)?.trim() ?? null)).toEqual(['agg-1 is already being restarted by another restart; following it', null]);
    expect(second).toEqual([{ event: 'taken', process: 'agg-1', pid: null, joined: true }, da]);
    expect(first.filter((e) => e.event === 'done')).toEqual([da]);
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(2);
  });
});

describe('a restart that does not come back', () => {
  it('an exit while starting: why, its last lines since the restart, its log; the run degraded, not failed', async () => {
    const { h, note, steps } = await readyRun();
    h.lines.get('agg-1')!('an old line from before the restart');
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(400);
    h.lines.get('agg-1')!('RuntimeError: CUDA out of memory');
    h.machine.remove(103);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0);
    const d = await done;
    expect(d).toEqual({
      event: 'done', ok: false, process: 'agg-1', reason: `agg-1 ${endedWords({ code: 1, signal: null, error: null })} while starting again`,
      diagnosis: null, lastLines: ['RuntimeError: CUDA out of memory'], log: LOG, runState: 'degraded',
    });
    expect(steps.filter((e) => e.event === 'done')).toHaveLength(1);
    expect(h.sup.record.state).toBe('degraded');
    expect(h.sup.record.processes[2]).toMatchObject({ state: 'failed' });
    expect(h.sup.record.processes[2].restartHistory?.[0]).toMatchObject({ outcome: 'failed', reason: d.ok ? '' : d.reason });
    expect(h.of('failed')).toEqual([]);
  });

  it('not ready within its own timeout: stopped again, said with what it waited for, one done', async () => {
    const { h, note, steps, at } = await readyRun();
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 5000 }, note);
    await h.clock.advance(400);
    const started = at[steps.findIndex((e) => e.event === 'starting')];
    await h.clock.advance(4500);
    expect(steps.map((e) => e.event)).toEqual(['taken', 'stopped', 'starting']);
    await h.clock.advance(1000);
    const d = await done;
    expect(d).toEqual({
      event: 'done', ok: false, process: 'agg-1', reason: 'agg-1 was not ready within 5 s (waiting for its KV cache line); stopped again',
      diagnosis: null, lastLines: [], log: LOG, runState: 'degraded',
    });
    expect(at[steps.length - 1] - started).toBe(5015);
    expect(steps.filter((e) => e.event === 'done')).toHaveLength(1);
    expect(h.machine.alive(103)).toBe(false);
    expect(h.sup.record.processes[2]).toMatchObject({ state: 'failed' });
  });

  it('no timeout of its own: the run\'s readiness deadline', async () => {
    const { h, note, steps } = await readyRun({ readyTimeoutMs: 8000 });
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(7000);
    expect(steps.map((e) => e.event)).toEqual(['taken', 'stopped', 'starting']);
    await h.clock.advance(2000);
    expect(await done).toMatchObject({ ok: false, reason: 'agg-1 was not ready within 8 s (waiting for its KV cache line); stopped again' });
  });

  it('its KV line seen but its health never: waiting for readiness; a process ignoring SIGTERM is killed, its late lines change nothing', async () => {
    const { h, note, steps } = await readyRun();
    h.healthy.delete('http://w/8082/health');
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 3000 }, note);
    await h.clock.advance(400);
    h.machine.add({ pid: 103, ppid: 11, pgid: 103, startTicks: 1103, cmd: 'python3 -m dynamo.vllm', termExitMs: null });
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(3000);
    // The deadline's stop waits out the grace: its health answers now, too late.
    h.healthy.add('http://w/8082/health');
    await h.clock.advance(2000);
    const d = await done;
    expect(d).toMatchObject({ ok: false });
    expect(d.ok ? '' : d.reason).toMatch(/^agg-1 was not ready within 3 s \(waiting for .*\); stopped again$/);
    expect(d.ok ? '' : d.reason).not.toContain('KV cache line');
    expect(steps.filter((e) => e.event === 'done')).toHaveLength(1);
    expect(steps.filter((e) => e.event === 'counted')).toEqual([]);
    expect(h.machine.signals.filter((s) => s.pid === -103 || s.pid === 103).map((s) => s.sig)).toEqual(['SIGTERM', 'SIGKILL']);
    expect(h.sup.record.processes[2].state).toBe('failed');
  });

  it('the run stopped while the old process is being stopped: nothing started again, the restart says so', async () => {
    const { h, note } = await readyRun();
    h.machine.add({ pid: 102, ppid: 11, pgid: 102, startTicks: 1102, cmd: 'python3 -m dynamo.vllm', termExitMs: null });
    const done = h.sup.restart('agg-1', { graceMs: 5000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(100);
    void h.sup.stop('SIGINT');
    await h.clock.advance(10_000);
    const d = await done;
    expect(d).toMatchObject({ ok: false, process: 'agg-1', reason: 'the run was stopped while it restarted' });
    expect(d.runState).not.toBe('degraded');
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(1);
  });

  it('a process that outlives SIGKILL: kept as a survivor, not started again beside it', async () => {
    const { h, note, lines } = await readyRun();
    h.machine.add({ pid: 102, ppid: 11, pgid: 102, startTicks: 1102, cmd: 'python3 -m dynamo.vllm', termExitMs: null, unkillable: true });
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(10_000);
    const d = await done;
    expect(d).toMatchObject({ ok: false, process: 'agg-1', reason: 'agg-1 outlived SIGKILL (pid 102); it is not started again beside it', runState: 'degraded' });
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(1);
    expect(lines().length).toBeGreaterThan(0);
  });
});

describe('a restart of a process that had ended', () => {
  it('by the command: the record says how it had ended', async () => {
    const { h, note } = await readyRun();
    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: null, signal: 'SIGKILL', error: null });
    await h.clock.advance(0);
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note);
    await h.clock.advance(400);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ ok: true });
    expect(h.sup.record.processes[2].restartHistory?.[0]).toMatchObject({
      by: 'command', cause: endedWords({ code: null, signal: 'SIGKILL', error: null }, 'parens'), exitCode: null, signal: 'SIGKILL', outcome: 'ready',
    });
  });

  it('by the policy: its own cause is kept, and the log\'s marker names the policy', async () => {
    const { h, note, marks } = await readyRun();
    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 137, signal: null, error: null });
    await h.clock.advance(0);
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note, { by: 'on-failure', cause: 'exited with code 137 (OOM)', diagnosis: null });
    await h.clock.advance(400);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ ok: true });
    expect(h.sup.record.processes[2].restartHistory?.[0]).toMatchObject({ by: 'on-failure', cause: 'exited with code 137 (OOM)', exitCode: 137 });
    expect(marks[0]).toMatch(new RegExp(`: --- dynamo-dev restart ${ISO}: agg-1 exited with code 137 \\(OOM\\); started again by --restart ${policyText({ mode: 'on-failure', max: null })} \\(restart 1\\) ---$`));
  });

  it('by the policy with no cause given: the marker says "ended"', async () => {
    const { h, note, marks } = await readyRun();
    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0);
    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, note, { by: 'on-failure', cause: null, diagnosis: null });
    await h.clock.advance(400);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ ok: true });
    expect(marks[0]).toMatch(new RegExp(`: --- dynamo-dev restart ${ISO}: agg-1 ended; started again by --restart on-failure \\(restart 1\\) ---$`));
  });
});

describe('the restart signal', () => {
  it('every request taken is restarted, each one\'s steps written to its own events', async () => {
    const reqs: RestartRequest[] = [{ id: '1-a', process: 'agg-1', graceMs: 1000, readyTimeoutMs: 0, by: { pid: 1, startTicks: 1 } }];
    const written: [string, string, string, RestartEvent][] = [];
    const { h } = await readyRun({ deps: { restartRequests: () => reqs.splice(0), restartEvent: (dir, run, id, e) => void written.push([dir, run, id, e]) } });
    takeRestartRequests(h.sup);
    await h.clock.advance(400);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(written.map(([dir, run, id, e]) => `${dir} ${run} ${id} ${e.event}`)).toEqual([
      '/state r1 1-a taken', '/state r1 1-a stopped', '/state r1 1-a starting', '/state r1 1-a log-ready', '/state r1 1-a counted', '/state r1 1-a done',
    ]);
    expect(written[5][3]).toMatchObject({ ok: true, process: 'agg-1' });
  });
});
