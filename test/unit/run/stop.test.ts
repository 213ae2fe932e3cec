import { describe, expect, it } from 'vitest';
import { startStop, stopTargets, type StopSnapshot } from '../../../src/run/stop.js';
import { escalationStep, nextScanInMs } from '../../../src/run/policy/escalation.js';
import { FakeMachine } from '../../helpers/fake-machine.js';

// The stop loop against an in-memory process table and clock (test/helpers/fake-machine.ts): the
// rare paths (leader gone, SIGKILL survivors, recycled pids) and the exact deadline, no real waits.

const worker = { pid: 100, ppid: 11, pgid: 100, startTicks: 500, cmd: 'python3 -m dynamo.vllm' };
const engine = { pid: 101, ppid: 100, pgid: 100, startTicks: 510, cmd: 'VLLM::EngineCore' };
const target = { name: 'agg-0', pid: 100, pgid: 100, startTicks: 500 };

describe('stopTargets with injected scan, kill and clock', () => {
  it('a clean shutdown: one SIGTERM to the group, done as soon as the group is empty, no SIGKILL', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 40 }, { ...engine, termExitMs: 40 }]);
    const r = await stopTargets([target], { graceMs: 1000 }, m.deps());
    expect(m.signals).toEqual([{ t: 0, pid: -100, sig: 'SIGTERM' }]);
    expect(r).toEqual({ stopped: [{ name: 'agg-0', pid: 100, signal: 'SIGTERM', ms: 45 }], remaining: [] });
  });

  it('SIGKILL exactly at the grace deadline, not a millisecond before', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null }, { ...engine, termExitMs: null }]);
    const r = await stopTargets([target], { graceMs: 1234 }, m.deps());
    expect(m.signals.filter((s) => s.sig === 'SIGKILL')).toEqual([{ t: 1234, pid: -100, sig: 'SIGKILL' }]);
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL', ms: 1234 + 15 });
    expect(r.remaining).toEqual([]);
  });

  it('a process that leaves 1 ms before the deadline is never SIGKILLed (the look at the deadline finds it gone)', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 1233 }]);
    const r = await stopTargets([target], { graceMs: 1234 }, m.deps());
    expect(m.signals.map((s) => s.sig)).toEqual(['SIGTERM']);
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGTERM', ms: 1234 });
  });

  it('leader gone but its group alive in a recorded descendant: the group is still stopped, escalation included, and the note says so', async () => {
    // The worker crashed first; its engine child (recorded while it ran) lives on in the worker's group.
    const m = new FakeMachine([{ ...engine, ppid: 1, termExitMs: null }]);
    const recorded = { ...target, descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] };
    const r = await stopTargets([recorded], { graceMs: 500 }, m.deps());
    expect(m.signals).toEqual([
      { t: 0, pid: -100, sig: 'SIGTERM' },
      { t: 500, pid: -100, sig: 'SIGKILL' },
    ]);
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL', note: 'leader had already exited; its group had not' });
    expect(m.alive(101)).toBe(false);
  });

  it('leader gone and nothing recorded lives in its group: the group is not signalled (a stranger may have reused the pgid)', async () => {
    // A daemon that got pid 100 later and leads its own group 100: it started after our leader.
    const m = new FakeMachine([{ pid: 100, ppid: 1, pgid: 100, startTicks: 900, cmd: 'sshd' }, { pid: 120, ppid: 100, pgid: 100, startTicks: 910, cmd: 'sshd: child' }]);
    const r = await stopTargets([{ ...target, descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] }], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([]);
    expect(r.stopped[0]).toMatchObject({ signal: null });
    expect(m.alive(120)).toBe(true);
  });

  it('the live leader left its recorded group (setsid): the old group is not signalled unless a recorded descendant is in it', async () => {
    const m = new FakeMachine([{ ...worker, pgid: 300, termExitMs: 0 }, { pid: 130, ppid: 1, pgid: 100, startTicks: 600, cmd: 'stranger' }]);
    await stopTargets([target], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([{ t: 0, pid: 100, sig: 'SIGTERM' }]);
    expect(m.alive(130)).toBe(true);
  });

  it('pid and pgid 0 and 1 are never signalled, whatever a record says', async () => {
    const m = new FakeMachine([{ pid: 2, ppid: 0, pgid: 0, startTicks: 2, cmd: 'kthreadd' }]);
    const r = await stopTargets([
      { name: 'zero', pid: 0, pgid: 0, startTicks: 0 }, { name: 'init', pid: 1, pgid: 1, startTicks: 1 },
      { name: 'kthread-group', pid: 50, pgid: 0, startTicks: 2, descendants: [{ pid: 2, startTicks: 2, cmd: 'kthreadd' }] },
    ], { graceMs: 100 }, m.deps());
    expect(m.signals.filter((s) => s.pid === 0 || s.pid === 1 || s.pid === -1 || s.pid === -0)).toEqual([]);
    expect(r.stopped.slice(0, 2).map((x) => x.note)).toEqual([
      'pid 0 is not a process teardown may signal; not signalled', 'pid 1 is not a process teardown may signal; not signalled',
    ]);
  });

  it('only processes of our own uid are signalled: another user\'s process a record names, or a member of a group, is left alone', async () => {
    const m = new FakeMachine([{ ...worker, uid: 1001 }]);
    const r = await stopTargets([target], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([]);
    expect(r.stopped[0].note).toBe('pid 100 belongs to another user: not signalled');
    // Our worker with a stranger in its group: no group signal; ours one by one.
    const mixed = new FakeMachine([{ ...worker, termExitMs: 0 }, { ...engine, termExitMs: 0 }, { pid: 140, ppid: 1, pgid: 100, startTicks: 520, cmd: 'su', uid: 0 }]);
    await stopTargets([target], { graceMs: 100 }, mixed.deps());
    expect(mixed.signals.map((s) => s.pid).sort()).toEqual([100, 101]);
    expect(mixed.alive(140)).toBe(true);
  });

  it('leader gone and a newer group member that started before the leader: not ours, never signalled', async () => {
    // A pgid can only be reused after the group emptied; a member older than our leader is a stranger.
    const m = new FakeMachine([{ ...engine, startTicks: 400, ppid: 1 }]);
    const r = await stopTargets([target], { graceMs: 500 }, m.deps());
    expect(m.signals).toEqual([]);
    expect(r.stopped[0]).toMatchObject({ signal: null, note: 'already gone' });
  });

  it('a process that survives SIGKILL is reported in remaining, after killWaitMs of repeated SIGKILLs, with its start ticks and its state then', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null }, { ...engine, termExitMs: null, unkillable: true, state: 'D' }]);
    const r = await stopTargets([target], { graceMs: 100, killWaitMs: 300 }, m.deps());
    const kills = m.signals.filter((s) => s.sig === 'SIGKILL');
    expect(kills[0]).toEqual({ t: 100, pid: -100, sig: 'SIGKILL' });
    expect(kills.length).toBeGreaterThan(2); // kept signalling while it remained
    expect(kills.at(-1)!.t).toBeLessThan(400);
    expect(r.remaining).toEqual([{ name: 'agg-0', pid: 101, cmd: 'VLLM::EngineCore', startTicks: 510, state: 'D' }]);
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL', note: '1 process(es) survived SIGKILL: 101', ms: 400 });
  });

  it('a recycled pid (start time differs) is never signalled, and the note says so', async () => {
    const m = new FakeMachine([{ ...worker, startTicks: 900, cmd: 'someone-else' }]);
    const r = await stopTargets([target], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([]);
    expect(r.stopped[0]).toMatchObject({ signal: null, note: expect.stringMatching(/recycled, not signalled/) });
    expect(m.alive(100)).toBe(true);
  });

  it('a recorded engine that escaped the group (setsid) is stopped with it; one that was recycled is not', async () => {
    const escaped = { pid: 200, ppid: 1, pgid: 200, startTicks: 520, cmd: 'VLLM::EngineCore' };
    const stranger = { pid: 201, ppid: 1, pgid: 201, startTicks: 990, cmd: 'vim' };
    const m = new FakeMachine([{ ...worker, termExitMs: 10 }, escaped, stranger]);
    const r = await stopTargets([{ ...target, descendants: [{ pid: 200, startTicks: 520, cmd: 'VLLM::EngineCore' }, { pid: 201, startTicks: 530, cmd: 'VLLM::EngineCore' }] }], { graceMs: 100 }, m.deps());
    expect(m.signalsTo(200).map((s) => s.sig)).toEqual(['SIGTERM']);
    expect(m.signalsTo(201)).toEqual([]);
    expect(m.alive(201)).toBe(true);
    expect(r.remaining).toEqual([]);
  });

  it('never signals itself or its ancestors, even when a record names them', async () => {
    const m = new FakeMachine();
    const r = await stopTargets([{ name: 'x', pid: 10, pgid: 10, startTicks: 5, single: true }], { graceMs: 100 }, m.deps());
    expect(m.signals).toEqual([]);
    expect(r.stopped[0]).toMatchObject({ signal: null, note: 'already gone' });
  });
});

describe('startStop: escalate and progress', () => {
  it('escalate() sends SIGKILL at once instead of at the deadline, and snapshots carry the new deadline', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null }]);
    const snaps: StopSnapshot[] = [];
    const h = startStop([target], { graceMs: 10_000, onState: (s) => snaps.push(structuredClone(s)) }, m.deps());
    expect(snaps[0]).toEqual({
      killAt: 10_000, killInMs: 10_000,
      targets: [{ name: 'agg-0', pid: 100, phase: 'terminating', signal: 'SIGTERM', alive: [100] }],
    });
    m.onScan = (mm) => {
      if (mm.t === 300) h.escalate();
    };
    const r = await h.done;
    expect(m.signals).toEqual([{ t: 0, pid: -100, sig: 'SIGTERM' }, { t: 300, pid: -100, sig: 'SIGKILL' }]);
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGKILL' });
    expect(snaps.map((s) => [s.killAt, s.targets[0].phase])).toEqual([
      [10_000, 'terminating'], [300, 'terminating'], [300, 'killing'], [300, 'done'],
    ]);
    expect(snaps[1].killInMs).toBe(0);
  });

  it('escalate() while waiting between scans wakes the loop (no wait for the next poll)', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: null }]);
    const deps = m.deps();
    // Until escalate(), a sleep never ends: only escalate() can move the loop on.
    let escalated = false;
    const sleep = (ms: number) => (escalated ? deps.clock.sleep(ms) : new Promise<void>(() => {}));
    const h = startStop([target], { graceMs: 10_000 }, { ...deps, clock: { now: () => m.t, sleep } });
    await new Promise((r) => setImmediate(r));
    m.t = 42;
    escalated = true;
    h.escalate();
    await h.done;
    expect(m.signals.at(-1)).toEqual({ t: 42, pid: -100, sig: 'SIGKILL' });
  });

  it('onProgress reports each target as it is done, the quick one first', async () => {
    const m = new FakeMachine([
      { ...worker, termExitMs: 200 },
      { pid: 300, ppid: 11, pgid: 300, startTicks: 600, cmd: 'python3 -m dynamo.frontend', termExitMs: 20 },
    ]);
    const done: string[] = [];
    await stopTargets([target, { name: 'frontend', pid: 300, pgid: 300, startTicks: 600 }], { graceMs: 1000, onProgress: (r) => done.push(`${r.name}@${r.ms}`) }, m.deps());
    expect(done).toEqual(['frontend@30', 'agg-0@210']);
  });
});

describe('escalation policy (pure)', () => {
  it('wait within the grace, kill at the deadline, kill again while members remain, give up after killWaitMs', () => {
    const base = { killed: false, aliveCount: 2, killAt: 1000, killWaitMs: 2000 };
    expect(escalationStep({ ...base, now: 999 })).toBe('wait');
    expect(escalationStep({ ...base, now: 1000 })).toBe('kill');
    expect(escalationStep({ ...base, killed: true, now: 2999 })).toBe('kill-again');
    expect(escalationStep({ ...base, killed: true, now: 3000 })).toBe('give-up');
    expect(escalationStep({ ...base, aliveCount: 0, now: 5000 })).toBe('finish');
  });
  it('scans fast in the first second, slower later, never past the deadline, fast again just after it', () => {
    expect(nextScanInMs({ now: 100, t0: 0, killAt: 5000, pollMs: 15 })).toBe(15);
    expect(nextScanInMs({ now: 2000, t0: 0, killAt: 5000, pollMs: 15 })).toBe(50);
    expect(nextScanInMs({ now: 4990, t0: 0, killAt: 5000, pollMs: 15 })).toBe(10);
    expect(nextScanInMs({ now: 5100, t0: 0, killAt: 5000, pollMs: 15 })).toBe(15);
    expect(nextScanInMs({ now: 5600, t0: 0, killAt: 5000, pollMs: 15 })).toBe(50);
  });
});
