import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/procs.leftover.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { ComputeAppsFacts, GpuFacts, ProcessInfo } from '../../../src/host/types.js';
import type { LostProcess } from '../../../src/run/losses.js';
import type { RunRecord } from '../../../src/run/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';

// procs.leftover as the user reads it: how many, how much GPU memory, each one's line, and a fix
// that never points teardown at another user's process or at our own run.
const proc = (pid: number, cmd: string, o: Partial<ProcessInfo> = {}): ProcessInfo => ({
  pid, ppid: 1, uid: 1000, user: 'alice', cmd, name: cmd.split(' ')[0], startTicks: 1000, ageMs: 95_000, pgid: pid, ...o,
});
const engine = (pid: number, o: Partial<ProcessInfo> = {}) => proc(pid, 'VLLM::EngineCore', o);
const apps = (...list: [number, string, number | null, string | null][]): ComputeAppsFacts => ({
  ok: true, apps: list.map(([pid, processName, usedMiB, gpuUuid]) => ({ pid, processName, usedMiB, gpuUuid })),
});
const live = (pids: number[], lost: LostProcess[] = []): RunView => ({
  record: { id: 'r1', processes: [] } as unknown as RunRecord, status: lost.length ? 'degraded' : 'ready', live: true, pids, lost, logsDir: '/x',
});
const lostWorker = (leftPids: number[]): LostProcess => ({
  name: 'agg-1', role: 'agg', how: 'exited', exitCode: 1, signal: null, at: null, noticed: false, leftPids, diagnosis: null,
});

describe('procs.leftover: the verdict line', () => {
  it('exactly three leftovers are all named; a fourth is "..."', async () => {
    const three = await check.run(fakeFacts({ processes: [engine(11), engine(12), engine(13)] }));
    expect(three.summary).toBe('3 leftover processes outside any live run (pid 11, 12, 13)');
    const four = await check.run(fakeFacts({ processes: [engine(11), engine(12), engine(13), engine(14)] }));
    expect(four.summary).toBe('4 leftover processes outside any live run (pid 11, 12, 13, ...)');
    expect(four.details).toHaveLength(4);
  });

  it('GPU memory is summed over the leftovers that hold some; none held says nothing of memory', async () => {
    const r = await check.run(fakeFacts({ processes: [engine(11), engine(12), engine(13)], computeApps: apps([11, 'VLLM::EngineCor', 1000, null], [12, 'VLLM::EngineCor', null, null]) }));
    expect(r.summary).toBe('3 leftover processes outside any live run, holding 1000 MiB of GPU memory (pid 11, 12, 13)');
    expect(r.details).toEqual([
      'pid 11  user alice  age 1m35s  GPU 1000 MiB  VLLM::EngineCore',
      'pid 12  user alice  age 1m35s  VLLM::EngineCore',
      'pid 13  user alice  age 1m35s  VLLM::EngineCore',
    ]);
  });

  it('a GPU app the process list does not show: named by nvidia-smi, user and age unknown, to kill by pid', async () => {
    const r = await check.run(fakeFacts({ processes: [], computeApps: apps([900, 'python3', 512, null]) }));
    expect(r).toEqual({
      status: 'fail',
      summary: '1 leftover process outside any live run, holding 512 MiB of GPU memory (pid 900)',
      details: ['pid 900  user ?  age ?  GPU 512 MiB  python3'],
      fix: 'kill 900',
      evidence: {
        processes: [{ pid: 900, user: null, ageMs: null, cmd: 'python3', kind: 'gpu-app', gpuMiB: 512 }],
        ourPids: [],
        liveRuns: [],
        gpuAppsChecked: true,
      },
    });
  });

  it("an engine listed by both the process list and nvidia-smi is one leftover, with the process list's command", async () => {
    const r = await check.run(fakeFacts({ processes: [engine(11)], computeApps: apps([11, 'VLLM::EngineCor', 700, null]) }));
    expect(r.summary).toBe('1 leftover process outside any live run, holding 700 MiB of GPU memory (pid 11)');
    expect(r.fix).toBe('dynamo-dev teardown --orphans');
  });
});

describe('procs.leftover: whose processes', () => {
  it("my engine goes to teardown, another user's to kill by its owner, a GPU app to kill", async () => {
    const r = await check.run(fakeFacts({
      processes: [engine(11), engine(12, { uid: 1001, user: 'bob' }), proc(13, 'python3 train.py')],
      computeApps: apps([13, 'python3', 100, null]),
    }));
    expect(r.fix).toBe("dynamo-dev teardown --orphans; then kill 12 13 (other users' processes: as their owner or root; teardown never touches them)");
  });

  it('only my own GPU app: a plain kill, no word about other users', async () => {
    const r = await check.run(fakeFacts({ processes: [proc(13, 'python3 train.py')], computeApps: apps([13, 'python3', 100, null]) }));
    expect(r.fix).toBe('kill 13');
  });

  it('when our uid or theirs is unknown, the engine is taken as ours to tear down', async () => {
    const unknownTheirs = await check.run(fakeFacts({ processes: [engine(12, { uid: null, user: null })] }));
    expect(unknownTheirs.fix).toBe('dynamo-dev teardown --orphans');
    expect(unknownTheirs.details).toEqual(['pid 12  user ?  age 1m35s  VLLM::EngineCore']);
  });

  it("what a live run's lost worker left: the run's teardown, or kill just it; its siblings stay the run's", async () => {
    const r = await check.run(fakeFacts({
      processes: [proc(6000, 'python3 -m dynamo.vllm', { pgid: 6000 }), engine(6101, { pgid: 6100 }), engine(7000)],
      run: live([6000], [lostWorker([6101])]),
    }));
    expect(r.summary).toBe('2 leftover processes outside any live run (pid 6101, 7000)');
    expect(r.details[0]).toBe('pid 6101  user alice  age 1m35s  VLLM::EngineCore  (left by agg-1 of run r1, which exited with code 1)');
    expect(r.fix).toBe('end the degraded run with what it left: `dynamo-dev teardown --run r1` (or only the leftover: `kill 6101`); then dynamo-dev teardown --orphans');
    expect(r.evidence.processes).toEqual([
      { pid: 6101, user: 'alice', ageMs: 95_000, cmd: 'VLLM::EngineCore', kind: 'vllm-engine', gpuMiB: null, leftBy: 'agg-1 of run r1, which exited with code 1' },
      { pid: 7000, user: 'alice', ageMs: 95_000, cmd: 'VLLM::EngineCore', kind: 'vllm-engine', gpuMiB: null },
    ]);
  });

  it("another user's process the lost worker left is killed by its owner, not through our teardown", async () => {
    const r = await check.run(fakeFacts({ processes: [proc(6000, 'python3 -m dynamo.vllm'), engine(6101, { uid: 1001, user: 'bob' })], run: live([6000], [lostWorker([6101])]) }));
    expect(r.fix).toBe("kill 6101 (other users' processes: as their owner or root; teardown never touches them)");
  });

  it("a process in one of the live run's groups is the run's, even with another parent", async () => {
    const r = await check.run(fakeFacts({ processes: [proc(6000, 'python3 -m dynamo.vllm'), engine(6200, { ppid: 1, pgid: 6000 })], run: live([6000]) }));
    expect(r.status).toBe('pass');
  });

  it('a parent loop in the process list does not hang the ownership walk', async () => {
    const r = await check.run(fakeFacts({ processes: [engine(20, { ppid: 21 }), proc(21, 'sh', { ppid: 20 })], run: live([6000]) }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('1 leftover process outside any live run (pid 20)');
  });
});

describe('procs.leftover: passes', () => {
  it('a live run\'s processes are counted as status lists them: its planned processes, what runs under them, its supervisor', async () => {
    const view: RunView = {
      ...live([5999, 6000, 6001, 6002]),
      record: {
        id: 'r1', supervisor: { pid: 5999, startTicks: 1, detached: true },
        processes: [{ name: 'frontend', pid: 6000, pgid: 6000, ports: {} }, { name: 'agg-0', pid: 6001, pgid: 6001, ports: {} }],
      } as unknown as RunRecord,
    };
    const one = await check.run(fakeFacts({ processes: [proc(6000, 'python3 -m dynamo.frontend'), proc(6001, 'python3 -m dynamo.vllm'), engine(6002, { ppid: 6001, pgid: 6001 })], run: view }));
    expect(one).toMatchObject({
      status: 'pass',
      summary: 'no engine process or GPU compute app outside a live run; live run r1: 2 processes, as status lists them (frontend pid 6000, agg-0 pid 6001), '
        + 'and under them agg-0\'s pid 6002 (VLLM::EngineCore), supervised by pid 5999 (the detached up)',
      details: [],
      fix: null,
      evidence: { processes: [], ourPids: [5999, 6000, 6001, 6002], gpuAppsChecked: true },
    });
    expect(one.evidence.liveRuns).toEqual([{
      runId: 'r1', name: null, processes: [{ name: 'frontend', pid: 6000 }, { name: 'agg-0', pid: 6001 }], gone: [],
      under: [{ pid: 6002, process: 'agg-0', cmd: 'VLLM::EngineCore' }], supervisor: { pid: 5999, detached: true },
    }]);
  });

  it('without the compute-app list the pass says only half was checked', async () => {
    const r = await check.run(fakeFacts({ run: live([6000]), computeApps: { ok: false, message: 'nvidia-smi failed' } }));
    expect(r.summary).toBe('no engine process outside a live run; live run r1: 0 processes, as status lists them (none alive), and under them the run\'s pid 6000, no supervisor alive; GPU compute apps not listed (nvidia-smi failed)');
    expect(r.evidence).toMatchObject({ gpuAppsChecked: false });
  });

  it('the stillRunning re-check is skipped when nothing was found', async () => {
    const facts = fakeFacts({});
    await check.run(facts);
    expect(facts.calls.stillRunning).toBeUndefined();
  });

  it("a program on another GPU than the recipe's second one is not counted; one on that GPU is", async () => {
    const g0 = healthyGpu.ok ? healthyGpu.gpus[0] : (undefined as never);
    const gpu: GpuFacts = { ...healthyGpu, gpus: [{ ...g0, index: 0, uuid: 'GPU-A' }, { ...g0, index: 1, uuid: 'GPU-B' }] } as GpuFacts;
    const recipe = recipeFrom({ gpu: 1 });
    const plan = buildPlan({ recipe, runDir: '/tmp/x' });
    const other = await check.run(fakeFacts({ gpu, computeApps: apps([900, 'python3', 10, 'GPU-A']) }, { recipe, plan }));
    expect(other.status).toBe('pass');
    const same = await check.run(fakeFacts({ gpu, computeApps: apps([900, 'python3', 10, 'GPU-B']) }, { recipe, plan }));
    expect(same.status).toBe('fail');
  });

  it("when doctor cannot tell its own uid, every engine counts as the user's own: teardown --orphans", async () => {
    const facts = { ...fakeFacts({ processes: [engine(12, { uid: 1001, user: 'bob' })] }), self: { uid: null, pid: 4242 } };
    const r = await check.run(facts);
    expect(r.fix).toBe('dynamo-dev teardown --orphans');
  });

  it("a GPU app on the recipe's GPU counts when the GPU list is unavailable (nothing on it is missed)", async () => {
    const gpu: GpuFacts = { ok: false, reason: 'error', message: 'x' };
    const r = await check.run(fakeFacts({ gpu, computeApps: apps([900, 'python3', 10, 'GPU-other']) }));
    expect(r.status).toBe('fail');
    const known = await check.run(fakeFacts({ gpu: healthyGpu, computeApps: apps([900, 'python3', 10, null]) }));
    expect(known.status).toBe('fail');
  });
});
