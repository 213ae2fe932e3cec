import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/procs.leftover.js';
import type { ProcessInfo } from '../../../src/host/types.js';
import { fakeFacts } from '../../helpers/facts.js';

// procs.leftover: a process of a live run of ANOTHER state dir (DYNAMO_DEV_HOME=/x up in a second
// terminal) is no leftover: no fail for it, but a warn naming it, the run, its state dir and the
// command that stops it, because it holds GPU memory during this user's measurement.

const proc = (pid: number, cmd: string, o: Partial<ProcessInfo> = {}): ProcessInfo => ({
  pid, ppid: 1, uid: 1000, user: 'alice', cmd, name: cmd.split(' ')[0], startTicks: 1000, ageMs: 95_000, pgid: pid, ...o,
});
const A = { runId: '20261201-120000-000-agg', stateDir: '/home/alice/exp-a' };

describe('procs.leftover and live runs of other state dirs', () => {
  it('warns (not fails) on an engine of another live run: pid, run id, state dir, GPU memory, and the teardown command', async () => {
    const facts = fakeFacts({
      processes: [proc(5001, 'python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B'), proc(5002, 'VLLM::EngineCore', { ppid: 5001 })],
      computeApps: { ok: true, apps: [{ pid: 5002, processName: 'VLLM::EngineCor', usedMiB: 3072, gpuUuid: null }] },
      otherRuns: [{ pid: 5001, ...A }, { pid: 5002, ...A }],
    });
    const r = await check.run(facts);
    expect(r.status).toBe('warn');
    expect(r.summary).toBe(`no leftover, but 2 processes of another live run (run ${A.runId} of ${A.stateDir}) holding 3072 MiB of GPU memory share the machine (pid 5001, 5002)`);
    expect(r.details).toEqual([
      `pid 5001  user alice  age 1m35s  python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B  (live run ${A.runId} of state dir ${A.stateDir}: not a leftover)`,
      `pid 5002  user alice  age 1m35s  GPU 3072 MiB  VLLM::EngineCore  (live run ${A.runId} of state dir ${A.stateDir}: not a leftover)`,
    ]);
    // Issue 31: never a command that stops someone else's run; its owner and state dir named.
    expect(r.fix).not.toContain('teardown');
    expect(r.fix).toBe(`if it must not run during your measurement: run ${A.runId} is alice's (state dir ${A.stateDir}): ask its owner; \`dynamo-dev status --state-dir ${A.stateDir}\` shows it`);
    expect(r.evidence.processes).toEqual([]);
    expect(r.evidence.otherRuns).toEqual([
      { pid: 5001, user: 'alice', ageMs: 95_000, cmd: 'python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B', kind: 'dynamo', gpuMiB: null, run: A.runId, stateDir: A.stateDir },
      expect.objectContaining({ pid: 5002, gpuMiB: 3072, run: A.runId, stateDir: A.stateDir }),
    ]);
    expect(r.fix).not.toContain('--orphans');
  });

  it('an engine whose environment shows no marker (setproctitle overwrote it: the real VLLM::EngineCore) is its worker\'s run\'s, by its parent chain; one of no run stays a leftover', async () => {
    const facts = fakeFacts({
      processes: [
        proc(5001, 'python3 -m dynamo.vllm --model /m/tiny32'), proc(5002, 'VLLM::EngineCore', { ppid: 5001 }), proc(5003, 'VLLM::Worker', { ppid: 5002 }),
        proc(6001, 'VLLM::EngineCore', { ppid: 1 }),
      ],
      otherRuns: [{ pid: 5001, ...A }],
    });
    const r = await check.run(facts);
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('(pid 6001)');
    expect((r.evidence.otherRuns as { pid: number; run: string }[]).map((o) => [o.pid, o.run])).toEqual([[5001, A.runId], [5002, A.runId], [5003, A.runId]]);
  });

    it('one process: the summary says so in the singular', async () => {
    const r = await check.run(fakeFacts({ processes: [proc(5001, 'python3 -m dynamo.mocker')], otherRuns: [{ pid: 5001, ...A }] }));
    expect(r.summary).toBe(`no leftover, but 1 process of another live run (run ${A.runId} of ${A.stateDir}) shares the machine (pid 5001)`);
  });

  it('a real leftover beside it still fails, counted alone; the other run is named with its own command', async () => {
    const r = await check.run(fakeFacts({
      processes: [proc(5001, 'python3 -m dynamo.mocker'), proc(6001, 'VLLM::EngineCore')],
      otherRuns: [{ pid: 5001, ...A }],
    }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('1 leftover process outside any live run (pid 6001)');
    expect(r.details[0]).toMatch(/^pid 6001 /);
    expect(r.details[1]).toContain(`(live run ${A.runId} of state dir ${A.stateDir}: not a leftover)`);
    expect(r.fix).toBe(`dynamo-dev teardown --orphans; then the other live run, if it must not run during your measurement: run ${A.runId} is alice's (state dir ${A.stateDir}): ask its owner; \`dynamo-dev status --state-dir ${A.stateDir}\` shows it`);
    expect((r.evidence.processes as { pid: number }[]).map((p) => p.pid)).toEqual([6001]);
  });

  it('an engine no other live run accounts for stays a leftover (fail), as before', async () => {
    const r = await check.run(fakeFacts({ processes: [proc(5001, 'python3 -m dynamo.mocker')], otherRuns: [] }));
    expect(r.status).toBe('fail');
    expect(r.evidence.otherRuns).toBeUndefined();
  });

  it('another user\'s engine is never another run\'s (its environment is not ours to read): it stays a leftover for its owner; ours is spared', async () => {
    const r = await check.run(fakeFacts({
      processes: [proc(5001, 'python3 -m dynamo.mocker', { uid: 1001, user: 'bob' }), proc(5002, 'python3 -m dynamo.mocker')],
      otherRuns: [{ pid: 5001, ...A }, { pid: 5002, ...A }],
    }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('1 leftover process outside any live run (pid 5001)');
    expect(r.fix).toBe(`kill 5001 (other users' processes: as their owner or root; teardown never touches them); then the other live run, if it must not run during your measurement: run ${A.runId} is alice's (state dir ${A.stateDir}): ask its owner; \`dynamo-dev status --state-dir ${A.stateDir}\` shows it`);
    expect((r.evidence.otherRuns as { pid: number }[]).map((p) => p.pid)).toEqual([5002]);
  });

  it('a process gone during the check and one of another run, between leftovers: the leftovers keep their order', async () => {
    const r = await check.run(fakeFacts({
      processes: [6001, 6002, 6003, 6004, 6005].map((pid) => proc(pid, 'VLLM::EngineCore')),
      otherRuns: [{ pid: 6004, ...A }],
    }, { exited: [6002] }));
    expect(r.summary).toBe('3 leftover processes outside any live run (pid 6001, 6003, 6005)');
    expect((r.evidence.processes as { pid: number }[]).map((p) => p.pid)).toEqual([6001, 6003, 6005]);
    expect((r.evidence.otherRuns as { pid: number }[]).map((p) => p.pid)).toEqual([6004]);
  });
});
