import { describe, expect, it } from 'vitest';
import { stopTargets } from '../../../src/run/stop.js';
import { FakeMachine } from '../../helpers/fake-machine.js';

// What the stop loop looks at while it waits: the run's own processes each tick, the whole process
// table only where a decision needs it (start, first SIGKILL, "done", giving up). A workstation runs
// thousands of processes: a full look costs 30-50 ms there, a look at a run a few reads.

const worker = { pid: 100, ppid: 11, pgid: 100, startTicks: 500, cmd: 'python3 -m dynamo.vllm' };
const engine = { pid: 101, ppid: 100, pgid: 100, startTicks: 510, cmd: 'VLLM::EngineCore' };
const target = { name: 'agg-0', pid: 100, pgid: 100, startTicks: 500 };

describe('stop loop: full looks only where a decision needs them', () => {
  it('a slow clean shutdown (1 s after SIGTERM): one full look at the start and one before "done", the ticks between look at the run only', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 1000 }, { ...engine, termExitMs: 1000 }]);
    const r = await stopTargets([target], { graceMs: 5000 }, m.deps());
    expect(r).toEqual({ stopped: [{ name: 'agg-0', pid: 100, signal: 'SIGTERM', ms: 1005 }], remaining: [] });
    expect(m.fullScans).toBe(2);
    expect(m.partialScans).toBe(67); // a look every 15 ms for the first second, then the one that saw it empty
  });

  it('without children files every tick is a full look (and the outcome is the same)', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 1000 }, { ...engine, termExitMs: 1000 }]);
    const r = await stopTargets([target], { graceMs: 5000 }, m.deps({ around: false }));
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGTERM', ms: 1005 });
    expect(m.partialScans).toBe(0);
    expect(m.fullScans).toBe(68);
  });

  it('a group member only a full look can find (forked, then its parent exited: init adopted it) keeps the stop going until it is gone', async () => {
    // Worker and engine leave 40 ms after SIGTERM; at 30 ms the engine has forked a helper into the
    // group and the helper's parent is gone: no known process leads to it any more.
    const m = new FakeMachine([{ ...worker, termExitMs: 40 }, { ...engine, termExitMs: 40 }]);
    m.onScan = (mm) => {
      if (mm.t === 30) mm.add({ pid: 150, ppid: 1, pgid: 100, startTicks: 520, cmd: 'VLLM::Helper', termExitMs: null });
    };
    const r = await stopTargets([target], { graceMs: 300 }, m.deps());
    expect(m.alive(150)).toBe(false);
    expect(m.signals.filter((s) => s.sig === 'SIGKILL')).toEqual([{ t: 300, pid: -100, sig: 'SIGKILL' }]);
    expect(r).toEqual({ stopped: [{ name: 'agg-0', pid: 100, signal: 'SIGKILL', ms: 315 }], remaining: [] });
  });

  it('a child forked while stopping is followed through the children files, without a full look, and stopped with the run', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 200 }]);
    m.onScan = (mm) => {
      // pid 160 left the group (setsid) but is still the worker's child.
      if (mm.t === 60) mm.add({ pid: 160, ppid: 100, pgid: 160, startTicks: 530, cmd: 'VLLM::Worker', termExitMs: null });
    };
    const r = await stopTargets([target], { graceMs: 400 }, m.deps());
    expect(m.signalsTo(160)).toEqual([{ t: 400, pid: 160, sig: 'SIGKILL' }]);
    expect(m.alive(160)).toBe(false);
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL' });
    expect(m.fullScans).toBeLessThanOrEqual(4);
  });
});
