import { describe, expect, it } from 'vitest';
import type { Diagnosis } from '../../../src/run/diagnosis.js';
import type { DescendantRecord } from '../../../src/run/types.js';
import { KV_LINE, supervisorHarness } from '../../helpers/supervisor-harness.js';

// The rare ends of a run, as the user sees them in up's output and run.json: two deaths at once, each
// state told once, the diagnosis kept for a process the deadline blamed, what the run marker finds
// after the recorded stop, and a dead worker's pid never taken for ours again.

const oom = { code: 'cuda.oom', title: 'CUDA out of memory', severity: 'error', explanation: 'x', fix: 'y', text: 'torch.OutOfMemoryError', file: 'f', line: 3 } as unknown as Diagnosis;

describe('deaths', () => {
  it('two workers dying in the same moment: the first is the failure; the second is not told as another death', async () => {
    const h = supervisorHarness();
    const running = h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(KV_LINE);
    await h.clock.advance(0);
    h.machine.remove(101);
    h.machine.remove(102);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    h.exits.get('agg-1')!({ code: null, signal: 'SIGKILL', error: null });
    await h.clock.advance(1000);
    expect(await running).toEqual({ outcome: 'failed', code: 1, reason: 'agg-0 exited with code 1 before it was ready' });
    expect(h.of('exited').map((e) => e.process)).toEqual(['agg-0']);
    expect(h.of('failed').map((e) => e.process)).toEqual(['agg-0']);
    expect(h.states()).toMatchObject({ 'agg-0': 'failed', 'agg-1': 'failed' });
  });

  it('a process that dies is told failed once', async () => {
    const h = supervisorHarness();
    const running = h.sup.run();
    await h.clock.advance(0);
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(1000);
    await running;
    expect(h.of('state').filter((e) => e.process === 'agg-0').map((e) => e.state)).toEqual(['starting', 'failed']);
  });

  it('the process the deadline blames keeps its log\'s diagnosis in run.json', async () => {
    const h = supervisorHarness({ readyTimeoutMs: 5000, deps: { diagnose: async (log) => ({ top: log.endsWith('agg-0.log') ? oom : null }) } });
    const running = h.sup.run();
    await h.clock.advance(5000);
    await h.clock.advance(1000);
    await running;
    expect(h.of('failed')[0]).toMatchObject({ process: 'agg-0', diagnosis: { code: 'cuda.oom' } });
    expect(h.sup.record.processes[1].diagnosis).toEqual({ code: 'cuda.oom', title: 'CUDA out of memory', text: 'torch.OutOfMemoryError', file: 'f', line: 3 });
  });

  it('watched after ready: a death is told without last lines (the logs are no longer followed)', async () => {
    const h = supervisorHarness({ detach: true, watch: true });
    void h.sup.run();
    await h.allReady();
    await h.clock.advance(100);
    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 3, signal: null, error: null });
    await h.clock.advance(0);
    expect(h.of('exited')).toEqual([{
      event: 'exited', process: 'agg-1', code: 3, signal: null, error: null, diagnosis: null, afterReady: true, lastLines: [], log: '/state/runs/r1/logs/agg-1.log',
    }]);
    void h.sup.stop('SIGTERM');
    await h.clock.advance(2000);
  });
});

describe('each state told once', () => {
  it('a user stop tells each process stopped exactly once, the never-started one included', async () => {
    const h = supervisorHarness();
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
    await running;
    const told = (name: string) => h.of('state').filter((e) => e.process === name).map((e) => e.state);
    expect(told('frontend')).toEqual(['starting', 'loading', 'stopped']);
    expect(told('agg-0')).toEqual(['starting', 'stopped']);
    expect(told('agg-1')).toEqual(['stopped']);
  });
});

describe('what the run marker finds after the recorded stop', () => {
  it('a survivor of the recorded stop is not stopped again; another marked process still is', async () => {
    const h = supervisorHarness({
      graceMs: 100,
      deps: { marked: (() => { let n = 0; return async () => (n++ === 0 ? [{ pid: 150, startTicks: 1150, cmd: 'VLLM::EngineCore' }, { pid: 300, startTicks: 3000, cmd: 'helper' }] : []); })() },
    });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.machine.add({ pid: 150, ppid: 101, pgid: 101, startTicks: 1150, cmd: 'VLLM::EngineCore', termExitMs: null, unkillable: true });
    h.machine.add({ pid: 300, ppid: 1, pgid: 300, startTicks: 3000, cmd: 'helper' });
    void h.sup.stop('SIGINT');
    await h.clock.advance(5000);
    await running;
    expect(h.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop frontend,agg-0', 'stop helper']);
    expect(h.machine.alive(300)).toBe(false);
  });

  it('a marked helper gets SIGTERM and the grace first, like everything else', async () => {
    const h = supervisorHarness({ graceMs: 1000, deps: { marked: (() => { let n = 0; return async () => (n++ === 0 ? [{ pid: 300, startTicks: 3000, cmd: 'helper' }] : []); })() } });
    h.machine.add({ pid: 300, ppid: 1, pgid: 300, startTicks: 3000, cmd: 'helper', termExitMs: 200 });
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    await h.clock.advance(3000);
    await running;
    expect(h.machine.signalsTo(300).map((s) => s.sig)).toEqual(['SIGTERM']);
    expect(h.machine.alive(300)).toBe(false);
  });

  it('a marked helper that survives SIGKILL is named and makes the stop a failed one', async () => {
    const h = supervisorHarness({ graceMs: 100, deps: { marked: async () => [{ pid: 300, startTicks: 3000, cmd: 'stuck-helper' }] } });
    h.machine.add({ pid: 300, ppid: 1, pgid: 300, startTicks: 3000, cmd: 'stuck-helper', termExitMs: null, unkillable: true });
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    await h.clock.advance(10_000);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 1 });
    expect(h.of('stopped')[0].remaining.map((r) => r.pid)).toEqual([300]);
    // Named once, stopped once: the second pass does not try it again.
    expect(h.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop frontend,agg-0', 'stop stuck-helper']);
  });
});

describe('engine processes recorded at the right moments', () => {
  const engine = (pid: number): DescendantRecord => ({ pid, startTicks: 5000 + pid, cmd: 'VLLM::EngineCore' });

  it('an engine present when a worker changes state is recorded then, not only at the next re-scan', async () => {
    const found = new Map<number, DescendantRecord[]>();
    const h = supervisorHarness({ descendantsMs: 60_000, deps: { descendants: (pid) => found.get(pid) ?? [] } });
    void h.sup.run();
    await h.clock.advance(0);
    found.set(101, [engine(150)]);
    h.lines.get('agg-0')!(KV_LINE);
    await h.clock.advance(0);
    expect(h.sup.record.processes[1].descendants).toEqual([engine(150)]);
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
  });

  it('a worker that died is never scanned again: its pid, reused by another program, is not taken for ours', async () => {
    const asked: number[] = [];
    let reused = false;
    const h = supervisorHarness({
      detach: true, watch: true,
      deps: { descendants: (pid) => (asked.push(pid), reused && pid === 102 ? [{ pid: 9999, startTicks: 99_999, cmd: 'someone-else' }] : []) },
    });
    void h.sup.run();
    await h.allReady();
    await h.clock.advance(100);
    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0);
    reused = true;
    asked.length = 0;
    await h.clock.advance(30_000);
    expect(asked).toEqual([100, 101]);
    expect(h.sup.record.processes[2].descendants.map((d) => d.pid)).not.toContain(9999);
    void h.sup.stop('SIGTERM');
    await h.clock.advance(2000);
  });
});
