import { describe, expect, it } from 'vitest';
import { processTargets, startStop, stopTargets, type StopDeps, type StopSnapshot } from '../../../src/run/stop.js';
import type { ProcessRecord } from '../../../src/run/types.js';
import { FakeMachine } from '../../helpers/fake-machine.js';

// The stop loop's rare paths against the in-memory process table (test/helpers/fake-machine.ts):
// signals the kernel refuses, processes that appear or leave during the stop, ties on start ticks,
// what the live view is told. Deadlines are exact: the fake clock moves only when the loop sleeps.

const worker = { pid: 100, ppid: 11, pgid: 100, startTicks: 500, cmd: 'python3 -m dynamo.vllm' };
const engine = { pid: 101, ppid: 100, pgid: 100, startTicks: 510, cmd: 'VLLM::EngineCore' };
const target = { name: 'agg-0', pid: 100, pgid: 100, startTicks: 500 };

/** The machine's deps, with kill(2) refusing some targets the way the kernel does (EPERM, or an error without a code). */
function refusing(m: FakeMachine, refuse: Record<number, string | null>, only?: NodeJS.Signals): StopDeps {
  const d = m.deps();
  return {
    ...d,
    kill(pid, sig) {
      if (pid in refuse && (only === undefined || sig === only)) {
        m.signals.push({ t: m.t, pid, sig });
        const code = refuse[pid];
        throw code === null ? new Error('kill failed for no stated reason') : Object.assign(new Error(`kill ${code}`), { code });
      }
      d.kill(pid, sig);
    },
  };
}

describe('a signal the system refuses', () => {
  it('SIGTERM to a group refused (EPERM): the result names the signal, the group and the reason, and the stop still escalates', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null }]);
    const r = await stopTargets([target], { graceMs: 200, killWaitMs: 100 }, refusing(m, { [-100]: 'EPERM' }));
    // The first refusal is the one reported (the SIGKILLs that follow are refused too).
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL', note: '1 process(es) survived SIGKILL: 100' });
    expect(m.signals.map((s) => [s.t, s.pid, s.sig]).slice(0, 2)).toEqual([[0, -100, 'SIGTERM'], [200, -100, 'SIGKILL']]);
    expect(r.remaining).toEqual([{ name: 'agg-0', pid: 100, cmd: 'python3 -m dynamo.vllm', startTicks: 500, state: 'S' }]);
  });

  it('a refused signal is reported with the pid when the target is signalled alone, and with the errno', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 30 }]);
    const notes: (string | undefined)[] = [];
    const h = startStop([{ ...target, single: true }], { graceMs: 1000, onState: (s) => notes.push(s.targets[0].note) }, refusing(m, { 100: 'EPERM' }));
    expect(notes[0]).toBe('SIGTERM to pid 100: EPERM');
    m.remove(100); // it leaves on its own
    const r = await h.done;
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGTERM', note: 'SIGTERM to pid 100: EPERM' });
  });

  it('an error without an errno code is reported in its own words; a process already gone (ESRCH) is no error at all', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 0 }, { pid: 200, ppid: 11, pgid: 200, startTicks: 700, cmd: 'python3 -m dynamo.frontend', termExitMs: 0 }]);
    const d = refusing(m, { [-100]: null }, 'SIGTERM');
    const r = await stopTargets([target, { name: 'frontend', pid: 200, pgid: 200, startTicks: 700 }], { graceMs: 100 }, {
      ...d,
      // The frontend leaves between the look and the signal: ESRCH.
      kill(pid, sig) {
        if (pid === -200) {
          m.remove(200);
          throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
        }
        d.kill(pid, sig);
      },
    });
    // Only the SIGTERM was refused: the SIGKILL at the deadline worked, and the refusal is what the result tells.
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL', note: 'SIGTERM to group 100: Error: kill failed for no stated reason' });
    expect(r.remaining).toEqual([]);
    expect(r.stopped[1]).toEqual({ name: 'frontend', pid: 200, signal: 'SIGTERM', ms: 15 });
  });
});

describe('who belongs to a stopping target', () => {
  it('a group member that started in the same clock tick as the leader is still ours: the stop waits for it and kills it at the deadline', async () => {
    // Leader gone, its group alive in a recorded engine; a second member started in the leader's tick.
    const m = new FakeMachine([
      { ...engine, ppid: 1, termExitMs: 0 },
      { pid: 102, ppid: 1, pgid: 100, startTicks: 500, cmd: 'VLLM::Worker', termExitMs: null },
    ]);
    const r = await stopTargets([{ ...target, descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] }], { graceMs: 400 }, m.deps());
    expect(m.signals).toEqual([{ t: 0, pid: -100, sig: 'SIGTERM' }, { t: 400, pid: -100, sig: 'SIGKILL' }]);
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL' });
    expect(m.alive(102)).toBe(false);
  });

  it('a child the leader forks out of its group while shutting down is followed and killed, also after the leader is gone', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 40 }]);
    m.onScan = (mm) => {
      // At the first look after SIGTERM the leader spawns a helper in a session of its own.
      if (mm.t === 15 && !mm.alive(150)) mm.add({ pid: 150, ppid: 100, pgid: 150, startTicks: 800, cmd: 'cleanup-helper', termExitMs: null });
    };
    const snaps: StopSnapshot[] = [];
    const r = await stopTargets([target], { graceMs: 300, onState: (s) => snaps.push(structuredClone(s)) }, m.deps());
    expect(m.signalsTo(150)).toEqual([{ t: 300, pid: 150, sig: 'SIGKILL' }]);
    expect(m.alive(150)).toBe(false);
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL', ms: 315 });
    expect(snaps.find((s) => s.targets[0].phase === 'killing')!.targets[0].alive).toEqual([150]);
  });

  it('the live view lists a target\'s pids in numeric order', async () => {
    // pids wrapped around: the engine got a lower pid than its leader.
    const m = new FakeMachine([{ ...worker, pid: 9000, pgid: 9000, termExitMs: null }, { ...engine, pid: 12, ppid: 9000, pgid: 9000, termExitMs: null }, { ...engine, pid: 130, ppid: 9000, pgid: 9000, termExitMs: null }]);
    const snaps: StopSnapshot[] = [];
    await stopTargets([{ ...target, pid: 9000, pgid: 9000 }], { graceMs: 100, onState: (s) => snaps.push(structuredClone(s)) }, m.deps());
    expect(snaps[0].targets[0].alive).toEqual([12, 130, 9000]);
  });

  it('a target stopped alone (single) is never signalled by group, even when it leads one', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 0 }, { ...engine, termExitMs: 0 }]);
    await stopTargets([{ ...target, single: true }], { graceMs: 100 }, m.deps());
    expect(m.signals.map((s) => s.pid).sort((a, b) => a - b)).toEqual([100, 101]);
  });

  it('a leader without recorded start ticks is never signalled, and neither is its group', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 0 }, { ...engine, termExitMs: 0 }]);
    const r = await stopTargets([{ ...target, startTicks: null, descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] }], { graceMs: 100 }, m.deps());
    expect(m.signals.filter((s) => s.pid < 0)).toEqual([]);
    expect(r.stopped[0].note).toBe('pid 100 is alive but its start time was never recorded; not signalled');
  });

  it('a group the records name as pgid 1 is never signalled, even when a recorded descendant lives in it', async () => {
    const m = new FakeMachine([{ pid: 300, ppid: 1, pgid: 1, startTicks: 900, cmd: 'VLLM::EngineCore', termExitMs: 0 }]);
    await stopTargets([{ name: 'agg-0', pid: 299, pgid: 1, startTicks: 899, descendants: [{ pid: 300, startTicks: 900, cmd: 'VLLM::EngineCore' }] }], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([{ t: 0, pid: 300, sig: 'SIGTERM' }]);
  });

  it('our own process group is never signalled by group, even when a recorded descendant lives in it', async () => {
    // pid 11 is this process (FakeMachine), leading group 11.
    const m = new FakeMachine([{ pid: 300, ppid: 11, pgid: 11, startTicks: 900, cmd: 'VLLM::EngineCore', termExitMs: 0 }]);
    await stopTargets([{ name: 'agg-0', pid: 299, pgid: 11, startTicks: 899, descendants: [{ pid: 300, startTicks: 900, cmd: 'VLLM::EngineCore' }] }], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([{ t: 0, pid: 300, sig: 'SIGTERM' }]);
  });
});

describe('timing and the live view', () => {
  it('escalate() after the deadline has passed changes nothing (no new deadline, no extra snapshot)', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null, unkillable: true }]);
    const snaps: StopSnapshot[] = [];
    const h = startStop([target], { graceMs: 100, killWaitMs: 200, onState: (s) => snaps.push(structuredClone(s)) }, m.deps());
    m.onScan = (mm) => {
      if (mm.t === 150) h.escalate();
    };
    await h.done;
    expect(snaps.map((s) => [s.killAt, s.targets[0].phase])).toEqual([[100, 'terminating'], [100, 'killing'], [100, 'done']]);
  });

  it('escalate() twice is the same as once', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null }]);
    const snaps: StopSnapshot[] = [];
    const h = startStop([target], { graceMs: 10_000, onState: (s) => snaps.push(structuredClone(s)) }, m.deps());
    m.onScan = (mm) => {
      if (mm.t === 45) {
        h.escalate();
        h.escalate();
      }
    };
    await h.done;
    expect(snaps.map((s) => s.killAt)).toEqual([10_000, 45, 45, 45]);
    expect(m.signals.filter((s) => s.sig === 'SIGKILL')).toEqual([{ t: 45, pid: -100, sig: 'SIGKILL' }]);
  });

  it('a negative grace means SIGKILL at the first look, never a deadline in the past', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null }]);
    const snaps: StopSnapshot[] = [];
    await stopTargets([target], { graceMs: -500, onState: (s) => snaps.push(structuredClone(s)) }, m.deps());
    expect(snaps[0]).toMatchObject({ killAt: 0, killInMs: 0 });
  });

  it('a stop that takes a fraction of a millisecond reports whole milliseconds', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 0 }]);
    const d = m.deps();
    const r = await stopTargets([target], { graceMs: 1000, pollMs: 0.4 }, { ...d, clock: { now: () => m.t, sleep: async (ms) => void (m.t += ms) } });
    expect(r.stopped[0].ms).toBe(1); // 1 ms (the minimal wait), not 0.4 rounded down or a fraction
    expect(Number.isInteger(r.stopped[0].ms)).toBe(true);
  });

  it('between looks the live view is told only of changes: one snapshot per phase, none while a target just waits', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 500 }]);
    const snaps: StopSnapshot[] = [];
    await stopTargets([target], { graceMs: 1000, onState: (s) => snaps.push(structuredClone(s)) }, m.deps());
    expect(snaps.map((s) => s.targets[0].phase)).toEqual(['terminating', 'done']);
    expect(snaps[1]).toMatchObject({ killAt: 1000, killInMs: 490, targets: [{ name: 'agg-0', pid: 100, phase: 'done', signal: 'SIGTERM', alive: [] }] });
    expect(snaps[1].targets[0]).not.toHaveProperty('note');
  });
});

describe('targets from a run record', () => {
  const rec = (o: Partial<ProcessRecord>): ProcessRecord => ({
    name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 500, startedAt: null, argv: [], env: {}, ports: {}, gpuMemoryUtilization: null,
    state: 'ready', kvTokens: null, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
  });
  it('each started process by its group (its own pid where no group was recorded) with its recorded engines; never-started ones skipped', () => {
    const d = [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }];
    expect(processTargets([
      rec({ descendants: d }), rec({ name: 'agg-1', pid: null, pgid: null, startTicks: null, state: 'waiting' }),
      rec({ name: 'frontend', pid: 200, pgid: null, startTicks: 700, descendants: undefined as unknown as [] }),
    ])).toEqual([
      { name: 'agg-0', pid: 100, pgid: 100, startTicks: 500, descendants: d },
      { name: 'frontend', pid: 200, pgid: 200, startTicks: 700, descendants: [] },
    ]);
  });
});
