import { describe, expect, it } from 'vitest';
import { runLiveness } from '../../../src/run/liveness.js';
import { buildRunStatus } from '../../../src/run/status-doc.js';
import { markStopped, runTargets } from '../../../src/run/teardown.js';
import { startStop } from '../../../src/run/stop.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { RunRecord } from '../../../src/run/types.js';
import { parseRunRecord } from '../../../src/run/record-schema.js';
import { viewOf } from '../../../src/run/state.js';
import { formatRunPlan } from '../../../src/ui/teardown-report.js';
import leftover from '../../../src/doctor/checks/procs.leftover.js';
import type { RunsScan } from '../../../src/run/run-scan.js';
import { fakeFacts } from '../../helpers/facts.js';
import { FakeMachine } from '../../helpers/fake-machine.js';
import { supervisorHarness } from '../../helpers/supervisor-harness.js';
import { recordedProcess, stoppingRecord } from '../../helpers/stopping-run.js';

// A process that outlives SIGKILL (D state: uninterruptible I/O, a hung GPU driver call) keeps its
// run on the books: the supervisor's stop (a user's or a failure's) records it in run.json by pid
// and start ticks, as the run's other pids; once the supervisor has exited, status shows the run
// with it (orphaned, not stopped or failed) and teardown targets it again; a pid that is no longer
// that process (start ticks differ) is neither the run's nor signalled. The machine is a FakeMachine
// (test/helpers/fake-machine.ts): `unkillable` is the D-state process no test can really make.

/** A supervisor harness whose run.json writes are kept (copies, as they were on disk). */
function harness(o: Parameters<typeof supervisorHarness>[0] = {}) {
  const written: RunRecord[] = [];
  const h = supervisorHarness({ graceMs: 100, ...o, deps: { ...o.deps, writeRun: (_dir, rec) => void written.push(structuredClone(rec)) } });
  return { ...h, written, onDisk: () => written.at(-1)! };
}

/** The machine as status sees it once `up` (the supervisor, pid 11) has exited. */
const afterUp = (m: FakeMachine) => m.deps().scan().filter((s) => s.pid !== 11);

const ENGINE = { pid: 150, ppid: 101, pgid: 101, startTicks: 1150, cmd: 'VLLM::EngineCore' };

describe('the supervisor\'s stop that leaves a survivor', () => {
  it('a user stop: run.json keeps the survivor (pid, start ticks, among agg-0\'s descendants); status then says orphaned with it, live, agg-0 not ready', async () => {
    const h = harness();
    const running = h.sup.run();
    await h.clock.advance(0);
    h.machine.add({ ...ENGINE, termExitMs: null, unkillable: true, state: 'D' });
    void h.sup.stop('SIGINT');
    await h.clock.advance(3000);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 1 });
    const rec = h.onDisk();
    expect(rec.state).toBe('stopped');
    expect(rec.survivors).toEqual([{ name: 'agg-0', pid: 150, startTicks: 1150, cmd: 'VLLM::EngineCore', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    expect(rec.processes.find((p) => p.name === 'agg-0')!.descendants).toContainEqual({ pid: 150, startTicks: 1150, cmd: 'VLLM::EngineCore' });
    const doc = buildRunStatus(rec, runLiveness(rec, afterUp(h.machine)), '/state', Date.now());
    expect([doc.state, doc.live, doc.supervisor.alive]).toEqual(['orphaned', true, false]);
    expect(doc.survivors).toEqual([{ name: 'agg-0', pid: 150, cmd: 'VLLM::EngineCore', state: 'D', at: rec.survivors![0].at }]);
    expect(doc.processes.find((p) => p.name === 'agg-0')).toMatchObject({ ready: false, pids: [150] });
  });

  it('a stop that ends everything records no survivors: status says stopped, nothing live', async () => {
    const h = harness();
    const running = h.sup.run();
    await h.clock.advance(0);
    h.machine.add({ ...ENGINE, termExitMs: null, state: 'D' }); // ignores SIGTERM, dies on SIGKILL
    void h.sup.stop('SIGINT');
    await h.clock.advance(3000);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 0 });
    const rec = h.onDisk();
    expect(rec).not.toHaveProperty('survivors');
    const doc = buildRunStatus(rec, runLiveness(rec, afterUp(h.machine)), '/state', Date.now());
    expect([doc.state, doc.live, doc.survivors]).toEqual(['stopped', false, []]);
  });

  it('a failure\'s stop: the run is recorded failed with the survivor, and status says orphaned (the frontend survived), not failed', async () => {
    const h = harness();
    const running = h.sup.run();
    await h.clock.advance(0);
    // The frontend itself (pid 100) is stuck; agg-0 exits, which fails the start and stops the run.
    h.machine.remove(100);
    h.machine.add({ pid: 100, ppid: 11, pgid: 100, startTicks: 1100, cmd: 'python3 -m dynamo.frontend', termExitMs: null, unkillable: true, state: 'D' });
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(3000);
    expect(await running).toMatchObject({ outcome: 'failed', code: 1 });
    const rec = h.onDisk();
    expect(rec.state).toBe('failed');
    expect(rec.survivors?.map((s) => [s.name, s.pid, s.startTicks])).toEqual([['frontend', 100, 1100]]);
    // Its own pid is its leader, not a descendant of itself.
    expect(rec.processes[0].descendants.map((d) => d.pid)).not.toContain(100);
    const doc = buildRunStatus(rec, runLiveness(rec, afterUp(h.machine)), '/state', Date.now());
    expect([doc.state, doc.live]).toEqual(['orphaned', true]);
    expect(doc.survivors?.map((s) => [s.name, s.pid, s.state])).toEqual([['frontend', 100, 'D']]);
    expect(doc.processes[0]).toMatchObject({ name: 'frontend', alive: true, ready: false });
  });

  it('a survivor only the run marker named is kept by its own name; status counts it the run\'s, teardown targets it alone with its start ticks', async () => {
    const h = harness({ deps: { marked: async () => [{ pid: 300, startTicks: 3000, cmd: 'stuck-helper --x' }] } });
    h.machine.add({ pid: 300, ppid: 1, pgid: 300, startTicks: 3000, cmd: 'stuck-helper --x', termExitMs: null, unkillable: true, state: 'D' });
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.stop('SIGINT');
    await h.clock.advance(10_000);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 1 });
    const rec = h.onDisk();
    expect(rec.survivors?.map((s) => [s.name, s.pid, s.startTicks])).toEqual([['stuck-helper', 300, 3000]]);
    expect(rec.processes.flatMap((p) => p.descendants.map((d) => d.pid))).not.toContain(300);
    const l = runLiveness(rec, afterUp(h.machine));
    // The run's (it keeps the run live), but no working part of it: doctor still sees a leftover.
    expect([l.processes, l.pids, l.ownedPids, l.survivors]).toEqual([true, [300], [], [{ pid: 300, state: 'D' }]]);
    const view = { record: rec, pids: l.ownedPids } as RunView;
    expect(runTargets(view, false).filter((t) => t.pid === 300)).toEqual([{ name: 'stuck-helper', pid: 300, pgid: 300, startTicks: 3000, single: true }]);
  });
});

describe('a survivor whose pid now belongs to another process', () => {
  // Recorded: agg-0's engine 150 (among its descendants) and a helper 300, both outlived SIGKILL.
  const rec: RunRecord = stoppingRecord({
    state: 'stopped',
    processes: [
      recordedProcess('frontend', 100, { state: 'stopped', signal: 'SIGTERM' }),
      recordedProcess('agg-0', 101, { state: 'stopped', signal: 'SIGKILL', descendants: [{ pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore' }] }),
    ],
    survivors: [
      { name: 'agg-0', pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore', at: '2026-12-02T01:06:00.000Z' },
      { name: 'stuck-helper', pid: 300, startTicks: 700, cmd: 'stuck-helper', at: '2026-12-02T01:06:00.000Z' },
    ],
  });

  it('still the same processes (start ticks): the run is live, and a stop of its targets signals both', async () => {
    const m = new FakeMachine([
      { pid: 150, ppid: 1, pgid: 101, startTicks: 600, cmd: 'VLLM::EngineCore', termExitMs: 0 },
      { pid: 300, ppid: 1, pgid: 300, startTicks: 700, cmd: 'stuck-helper', termExitMs: 0 },
    ]);
    const l = runLiveness(rec, m.deps().scan());
    expect([l.processes, l.pids]).toEqual([true, [150, 300]]);
    const r = await startStop(runTargets({ record: rec, pids: l.ownedPids } as RunView, false), { graceMs: 100 }, m.deps()).done;
    expect(r.remaining).toEqual([]);
    expect(m.signals.map((s) => s.pid).sort()).toEqual([-101, 300]);
    expect([m.alive(150), m.alive(300)]).toEqual([false, false]);
  });

  it('recycled (start ticks differ): not the run\'s, status says stopped, and a stop of its targets signals neither', async () => {
    const m = new FakeMachine([
      { pid: 150, ppid: 1, pgid: 150, startTicks: 9150, cmd: 'someone-elses', termExitMs: 0 },
      { pid: 300, ppid: 1, pgid: 300, startTicks: 9300, cmd: 'someone-elses-too', termExitMs: 0 },
    ]);
    const l = runLiveness(rec, m.deps().scan());
    expect([l.processes, l.pids, l.survivors]).toEqual([false, [], []]);
    expect(buildRunStatus(rec, l, '/state', Date.now())).toMatchObject({ state: 'stopped', live: false, survivors: [] });
    const r = await startStop(runTargets({ record: rec, pids: [] } as unknown as RunView, false), { graceMs: 100 }, m.deps()).done;
    expect(m.signals).toEqual([]);
    expect(r.stopped.find((s) => s.pid === 300)?.note).toBe('pid 300 now belongs to another process (start time differs): recycled, not signalled');
    expect([m.alive(150), m.alive(300)]).toEqual([true, true]);
  });
});

describe('markStopped: teardown\'s record after a stop that left survivors', () => {
  const ready = (): RunRecord => stoppingRecord({ state: 'ready', supervisor: { pid: 50, startTicks: 40, detached: true } });
  const results = [
    { name: 'frontend', pid: 100, signal: 'SIGTERM' as const, ms: 20 },
    { name: 'agg-0', pid: 101, signal: 'SIGKILL' as const, ms: 2400, note: '1 process(es) survived SIGKILL: 150' },
    { name: 'agg-1', pid: 102, signal: 'SIGTERM' as const, ms: 30 },
  ];
  const left = [{ name: 'agg-0', pid: 150, cmd: 'VLLM::EngineCore', startTicks: 600, state: 'D' }];
  const now = new Date('2026-12-02T02:00:00Z');

  it('kept by pid and start ticks: the run and every process recorded stopped, the survivor among agg-0\'s descendants', () => {
    const out = markStopped(ready(), results, false, now, left);
    expect(out.state).toBe('stopped');
    expect(out.survivors).toEqual([{ name: 'agg-0', pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore', at: '2026-12-02T02:00:00.000Z' }]);
    expect(out.processes.map((p) => [p.name, p.state, p.signal])).toEqual([['frontend', 'stopped', 'SIGTERM'], ['agg-0', 'stopped', 'SIGKILL'], ['agg-1', 'stopped', 'SIGTERM']]);
    expect(out.processes[1].descendants).toEqual([{ pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore' }]);
  });

  it('a failed run stays failed; what remains without start ticks (never kept) leaves the run in its state, as before', () => {
    expect(markStopped({ ...ready(), state: 'failed' }, results, false, now, left).state).toBe('failed');
    const unkept = markStopped(ready(), results, false, now, [{ name: 'bash', pid: 4000, cmd: 'bash' }]);
    expect(unkept.state).toBe('ready');
    expect(unkept).not.toHaveProperty('survivors');
    expect(unkept.processes[1].state).toBe('ready');
  });

  it('a later teardown that ends them all drops the survivors', () => {
    const before = markStopped(ready(), results, false, now, left);
    const after = markStopped(before, [{ name: 'agg-0', pid: 101, signal: 'SIGTERM', ms: 40 }], true, now);
    expect(after.state).toBe('stopped');
    expect(after).not.toHaveProperty('survivors');
  });
});

describe('run.json as read back: its survivors are checked like its other pids', () => {
  const text = (survivors: unknown) => JSON.stringify({ ...stoppingRecord({ state: 'stopped' }), survivors });
  const SURVIVOR = { name: 'agg-0', pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore', at: '2026-12-02T01:06:00.000Z' };

  it('a survivor with pid and start ticks is kept', () => {
    const r = parseRunRecord(text([SURVIVOR]), 'r', (n) => `/logs/${n}.log`);
    expect(r.ok && r.record.survivors).toEqual([SURVIVOR]);
  });

  it.each([
    ['pid 1 (init: never ours to signal)', { ...SURVIVOR, pid: 1 }, 'survivors.0.pid'],
    ['no start ticks (a stranger could not be told from it)', { ...SURVIVOR, startTicks: null }, 'survivors.0.startTicks'],
  ])('%s: the record is refused', (_what, bad, path) => {
    const r = parseRunRecord(text([bad]), 'r', (n) => `/logs/${n}.log`);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(new RegExp(`^${path.replace(/\./g, '\\.')}: `));
  });
});

describe('what doctor and teardown read of such a run (its view)', () => {
  const rec = stoppingRecord({
    state: 'stopped',
    processes: [
      recordedProcess('frontend', 100, { state: 'stopped', signal: 'SIGTERM' }),
      recordedProcess('agg-0', 101, { state: 'stopped', signal: 'SIGKILL', descendants: [{ pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore' }] }),
    ],
    survivors: [{ name: 'agg-0', pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore', at: '2026-12-02T01:06:00.000Z' }],
  });
  const rs: RunsScan = { scan: [{ pid: 150, comm: 'VLLM::EngineCor', state: 'D', ppid: 1, pgid: 101, session: 1, startTicks: 600 }], bootId: null, marks: new Map(), ours: () => true };

  it('live and orphaned, the survivor named as such, yet not a working part of the run: doctor\'s procs.leftover still fails on it', async () => {
    const v = await viewOf('/nonexistent-state', rec, rs);
    expect([v.live, v.status, v.pids, v.survivors]).toEqual([true, 'orphaned', [], [150]]);
    expect(formatRunPlan(v, 10)).toContain('its last stop could not end pid 150 (agg-0) with SIGKILL; trying again');
    const r = await leftover.run(fakeFacts({
      processes: [{ pid: 150, ppid: 1, uid: 1000, user: 'alice', cmd: 'VLLM::EngineCore', name: 'VLLM::EngineCore', startTicks: 600, ageMs: 95_000, pgid: 101 }],
      run: v,
    }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('1 leftover process outside any live run (pid 150)');
  });
});
