import { describe, expect, it } from 'vitest';
import { stopTargets, type StopDeps, type StopSnapshot } from '../../../src/run/stop.js';
import { FakeMachine } from '../../helpers/fake-machine.js';

// Who a stop signals and what it reports, on the in-memory process table
// (test/helpers/fake-machine.ts): processes of a record that no longer prove to be ours are left
// alone, the first refusal is the one the result tells, a target once done stays done.

const worker = { pid: 100, ppid: 11, pgid: 100, startTicks: 500, cmd: 'python3 -m dynamo.vllm' };
const target = { name: 'agg-0', pid: 100, pgid: 100, startTicks: 500 };
const engineRec = { pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' };

describe('our uid unknown (a platform without getuid) or no way to read owners', () => {
  it('the stop still stops its own run: no ownership check is made', async () => {
    for (const override of [{ uid: undefined }, { uid: null }, { owner: undefined }] as Partial<StopDeps>[]) {
      const m = new FakeMachine([{ ...worker, termExitMs: 0 }]);
      const r = await stopTargets([target], { graceMs: 1000 }, { ...m.deps(), ...override });
      expect(r.stopped[0], JSON.stringify(override)).toEqual({ name: 'agg-0', pid: 100, signal: 'SIGTERM', ms: 15 });
      expect(m.signals).toEqual([{ t: 0, pid: -100, sig: 'SIGTERM' }]);
    }
  });

  it('each process\'s owner is read once per stop, not at every look', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 600 }]);
    const d = m.deps();
    const reads = new Map<number, number>();
    const r = await stopTargets([target], { graceMs: 1000 }, {
      ...d,
      owner: (pid) => {
        reads.set(pid, (reads.get(pid) ?? 0) + 1);
        return d.owner!(pid);
      },
    });
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGTERM', ms: 600 });
    expect([...reads]).toEqual([[100, 1]]);
  });
});

describe('processes a record no longer proves to be ours', () => {
  it('a group member that started before the leader is not waited for nor killed (the run cannot have started it)', async () => {
    const m = new FakeMachine([
      { ...worker, termExitMs: 0 },
      { pid: 90, ppid: 1, pgid: 100, startTicks: 400, cmd: 'older-joiner', termExitMs: null },
    ]);
    const r = await stopTargets([target], { graceMs: 300 }, m.deps());
    expect(r.stopped[0]).toEqual({ name: 'agg-0', pid: 100, signal: 'SIGTERM', ms: 15 });
    expect(m.signals.filter((s) => s.sig === 'SIGKILL')).toEqual([]);
    expect(m.alive(90)).toBe(true);
  });

  it('a recorded engine pid now held by another process (other start time) in the old group proves nothing: nothing is signalled', async () => {
    // Leader gone; pid 101 and pgid 100 were reused by a stranger.
    const m = new FakeMachine([{ pid: 101, ppid: 1, pgid: 100, startTicks: 900, cmd: 'stranger', termExitMs: 0 }]);
    const r = await stopTargets([{ ...target, descendants: [engineRec] }], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([]);
    expect(r.stopped[0]).toEqual({ name: 'agg-0', pid: 100, signal: null, ms: 0, note: 'already gone' });
    expect(m.alive(101)).toBe(true);
  });

  it('a record without the leader\'s start time: its group is never signalled, only the recorded engine that still lives', async () => {
    const m = new FakeMachine([
      { pid: 101, ppid: 1, pgid: 100, startTicks: 510, cmd: 'VLLM::EngineCore', termExitMs: 0 },
      { pid: 102, ppid: 1, pgid: 100, startTicks: 520, cmd: 'unrecorded', termExitMs: 0 },
    ]);
    await stopTargets([{ ...target, startTicks: null, descendants: [engineRec] }], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([{ t: 0, pid: 101, sig: 'SIGTERM' }]);
    expect(m.alive(102)).toBe(true);
  });

  it('a recorded engine that left the group (setsid) does not prove the old group: only the engine is signalled', async () => {
    const m = new FakeMachine([
      { pid: 101, ppid: 1, pgid: 150, startTicks: 510, cmd: 'VLLM::EngineCore', termExitMs: 0 },
      { pid: 102, ppid: 1, pgid: 100, startTicks: 900, cmd: 'stranger', termExitMs: 0 },
    ]);
    const r = await stopTargets([{ ...target, descendants: [engineRec] }], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([{ t: 0, pid: 101, sig: 'SIGTERM' }]);
    expect(r.stopped[0]).toEqual({ name: 'agg-0', pid: 100, signal: 'SIGTERM', ms: 15 });
    expect(m.alive(102)).toBe(true);
  });

  it('a target already done is not followed further: a stranger that later takes its group id is not listed as its process', async () => {
    const m = new FakeMachine([
      { ...worker, termExitMs: 0 },
      { pid: 200, ppid: 11, pgid: 200, startTicks: 700, cmd: 'python3 -m dynamo.frontend', termExitMs: 200 },
    ]);
    m.onScan = (mm) => {
      if (mm.t === 90 && !mm.alive(300)) mm.add({ pid: 300, ppid: 1, pgid: 100, startTicks: 950, cmd: 'stranger', termExitMs: null });
    };
    const snaps: StopSnapshot[] = [];
    await stopTargets([target, { name: 'frontend', pid: 200, pgid: 200, startTicks: 700 }], { graceMs: 1000, onState: (s) => snaps.push(structuredClone(s)) }, m.deps());
    const last = snaps[snaps.length - 1];
    expect(last.targets.map((t) => [t.name, t.phase, t.alive])).toEqual([['agg-0', 'done', []], ['frontend', 'done', []]]);
    expect(snaps.every((s) => s.targets[0].phase !== 'done' || s.targets[0].alive.length === 0)).toBe(true);
    expect(m.signalsTo(-100)).toEqual([{ t: 0, pid: -100, sig: 'SIGTERM' }]);
  });
});

describe('what the result tells', () => {
  it('the first refusal is what the result tells, also when the SIGKILLs are refused too and the group then leaves on its own', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null, exitAt: 250 }]);
    const d = m.deps();
    const r = await stopTargets([target], { graceMs: 200, killWaitMs: 500 }, {
      ...d,
      kill(pid, sig) {
        if (pid === -100) {
          m.signals.push({ t: m.t, pid, sig });
          throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
        }
        d.kill(pid, sig);
      },
    });
    expect(m.signals.map((s) => s.sig)).toContain('SIGKILL');
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL', note: 'SIGTERM to group 100: EPERM' });
    expect(r.remaining).toEqual([]);
  });

  it('a stop of a group whose leader had exited says so, also after signals that worked', async () => {
    const m = new FakeMachine([{ pid: 101, ppid: 1, pgid: 100, startTicks: 510, cmd: 'VLLM::EngineCore', termExitMs: 0 }]);
    const r = await stopTargets([{ ...target, descendants: [engineRec] }], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([{ t: 0, pid: -100, sig: 'SIGTERM' }]);
    expect(r.stopped[0]).toEqual({ name: 'agg-0', pid: 100, signal: 'SIGTERM', ms: 15, note: 'leader had already exited; its group had not' });
  });

  it('a clean stop carries no note at all', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 0 }]);
    const r = await stopTargets([target], { graceMs: 100 }, m.deps());
    expect(r.stopped[0]).toStrictEqual({ name: 'agg-0', pid: 100, signal: 'SIGTERM', ms: 15 });
  });

  it('several processes that survive SIGKILL are listed comma-separated, with their command lines', async () => {
    const m = new FakeMachine([
      { ...worker, termExitMs: null, unkillable: true },
      { pid: 101, ppid: 100, pgid: 100, startTicks: 510, cmd: 'VLLM::EngineCore', termExitMs: null, unkillable: true },
    ]);
    const r = await stopTargets([target], { graceMs: 100, killWaitMs: 100 }, m.deps());
    expect(r.stopped[0].note).toBe('2 process(es) survived SIGKILL: 100, 101');
    expect(r.remaining).toEqual([
      { name: 'agg-0', pid: 100, cmd: 'python3 -m dynamo.vllm', startTicks: 500, state: 'S' },
      { name: 'agg-0', pid: 101, cmd: 'VLLM::EngineCore', startTicks: 510, state: 'S' },
    ]);
  });
});

describe('full looks with several targets', () => {
  it('one target still waiting does not let another be called done on a partial look: a member only a full look finds is killed', async () => {
    const m = new FakeMachine([
      { ...worker, termExitMs: 1000 },
      { pid: 200, ppid: 11, pgid: 200, startTicks: 700, cmd: 'python3 -m dynamo.frontend', termExitMs: 0 },
    ]);
    m.onScan = (mm) => {
      // The frontend forked a helper into its group and exited: init adopted the helper.
      if (mm.t === 15 && !mm.alive(250)) mm.add({ pid: 250, ppid: 1, pgid: 200, startTicks: 800, cmd: 'helper', termExitMs: null });
    };
    const r = await stopTargets([target, { name: 'frontend', pid: 200, pgid: 200, startTicks: 700 }], { graceMs: 300 }, m.deps());
    expect(m.alive(250)).toBe(false);
    expect(r.stopped[1]).toMatchObject({ name: 'frontend', signal: 'SIGKILL' });
    expect(m.signalsTo(-200).map((s) => [s.t, s.sig])).toEqual([[0, 'SIGTERM'], [300, 'SIGKILL']]);
  });

  it('while SIGKILLed processes get time to vanish, each tick looks at the run only: full looks at the start, the first SIGKILL and the give-up', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null, unkillable: true }]);
    const r = await stopTargets([target], { graceMs: 90, killWaitMs: 300 }, m.deps());
    expect(r.remaining.map((s) => s.pid)).toEqual([100]);
    expect(m.fullScans).toBe(3);
  });
});

