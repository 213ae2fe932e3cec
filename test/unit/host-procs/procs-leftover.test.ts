import { describe, expect, it } from 'vitest';
import check, { formatAge } from '../../../src/doctor/checks/procs.leftover.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { ProcessInfo } from '../../../src/host/types.js';
import type { RunRecord } from '../../../src/run/types.js';
import type { GpuFacts } from '../../../src/host/types.js';
import { fakeFacts, healthyGpu } from '../../helpers/facts.js';

const proc = (pid: number, cmd: string, o: Partial<ProcessInfo> = {}): ProcessInfo => ({
  pid, ppid: 1, uid: 1000, user: 'alice', cmd, name: cmd.split(' ')[0], startTicks: 1000, ageMs: 7_980_000, pgid: pid, ...o,
});

const liveRun = (pids: number[]): RunView => ({
  record: { id: '20261130-101500-agg', processes: [] } as unknown as RunRecord,
  status: 'ready', live: true, pids, lost: [], logsDir: '/tmp/dd/logs',
});

const base = [
  proc(1, '/sbin/init'),
  proc(4242, 'node /work/main/bin/dynamo-dev.js doctor --json'),
  proc(3000, 'vim vllm/v1/engine/core.py'),
  proc(3001, 'grep VLLM'),
  proc(3002, 'pip install vllm'),
];

describe('procs.leftover', () => {
  it('passes on a clean machine, even with "vllm" in other processes\' arguments', async () => {
    const r = await check.run(fakeFacts({ processes: base }));
    expect(r.status).toBe('pass');
    expect(r.fix).toBeNull();
  });

  it('fails on an orphaned VLLM::EngineCore holding GPU memory, with pid, user, age, command and MiB', async () => {
    const facts = fakeFacts({
      processes: [...base, proc(48211, 'VLLM::EngineCore', { ppid: 1 })],
      computeApps: { ok: true, apps: [{ pid: 48211, processName: 'VLLM::EngineCor', usedMiB: 4096, gpuUuid: null }] },
    });
    const r = await check.run(facts);
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('4096 MiB');
    expect(r.summary).toContain('pid 48211');
    expect(r.details).toEqual(['pid 48211  user alice  age 2h13m  GPU 4096 MiB  VLLM::EngineCore']);
    expect(r.fix).toBe('dynamo-dev teardown --orphans');
    expect(r.evidence.processes).toEqual([
      { pid: 48211, user: 'alice', ageMs: 7_980_000, cmd: 'VLLM::EngineCore', kind: 'vllm-engine', gpuMiB: 4096 },
    ]);
  });

  it('fails on a leftover dynamo worker and frontend', async () => {
    const r = await check.run(fakeFacts({
      processes: [...base, proc(5001, 'python3 -m dynamo.frontend --http-port 8000'), proc(5002, 'python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B')],
    }));
    expect(r.status).toBe('fail');
    expect(r.details).toHaveLength(2);
    expect(r.summary).toMatch(/^2 leftover processes/);
  });

  it('passes when the engine processes belong to the live run (by pid or by its process groups)', async () => {
    const facts = fakeFacts({
      processes: [...base, proc(6000, 'python3 -m dynamo.vllm --model m', { pgid: 6000 }), proc(6001, 'VLLM::EngineCore', { ppid: 6000, pgid: 6000 })],
      computeApps: { ok: true, apps: [{ pid: 6001, processName: 'VLLM::EngineCor', usedMiB: 3000, gpuUuid: null }] },
      run: liveRun([6000]),
    });
    const r = await check.run(facts);
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('live run 20261130-101500-agg');
  });

  it('passes an engine process descended from the live run in another process group', async () => {
    const r = await check.run(fakeFacts({
      processes: [...base, proc(6000, 'python3 -m dynamo.vllm --model m'), proc(6001, 'VLLM::EngineCore', { ppid: 6000, pgid: 6001 }), proc(6002, 'VLLM::Worker_TP0_EP0', { ppid: 6001, pgid: 6001 })],
      run: liveRun([6000]),
    }));
    expect(r.status).toBe('pass');
  });

  it('does not treat a stopped run\'s pids as ours', async () => {
    const r = await check.run(fakeFacts({
      processes: [...base, proc(6001, 'VLLM::EngineCore')],
      run: { ...liveRun([6001]), live: false, status: 'stopped' },
    }));
    expect(r.status).toBe('fail');
  });

  it('fails on a non-engine GPU compute app, and tells to kill other users\' processes (teardown never does)', async () => {
    const r = await check.run(fakeFacts({
      processes: [...base, proc(7000, 'VLLM::EngineCore', { uid: 1001, user: 'bob' }), proc(7100, 'python3 train.py')],
      computeApps: { ok: true, apps: [{ pid: 7100, processName: 'python3', usedMiB: 1200, gpuUuid: null }] },
    }));
    expect(r.status).toBe('fail');
    expect(r.details).toEqual([
      'pid 7000  user bob  age 2h13m  VLLM::EngineCore',
      'pid 7100  user alice  age 2h13m  GPU 1200 MiB  python3 train.py',
    ]);
    expect(r.fix).toContain('kill 7000 7100');
    expect(r.fix).toContain('teardown never touches them');
    expect(r.fix).not.toContain('teardown --orphans');
  });

  it('never flags the doctor itself', async () => {
    // Our own pid is 4242 in fakeFacts; even an odd title on it is ours.
    const r = await check.run(fakeFacts({ processes: [proc(4242, 'VLLM::EngineCore')] }));
    expect(r.status).toBe('pass');
  });

  it('says when GPU apps could not be listed', async () => {
    const r = await check.run(fakeFacts({ computeApps: { ok: false, message: 'nvidia-smi not found on PATH' } }));
    expect(r.status).toBe('pass');
    expect(r.details).toEqual(['GPU compute apps not checked: nvidia-smi not found on PATH']);
    expect(r.summary).toBe('no engine process outside a live run; GPU compute apps not listed (nvidia-smi not found on PATH)');
    expect(r.summary).not.toContain('see details');
  });

  it("ignores a non-engine compute app on another GPU than the recipe's, but not one on its GPU", async () => {
    const gpu0 = healthyGpu.ok ? healthyGpu.gpus[0] : (undefined as never);
    const twoGpus: GpuFacts = { ...healthyGpu, gpus: [gpu0, { ...gpu0, index: 1, uuid: 'GPU-other' }] } as GpuFacts;
    const apps = (uuid: string) => ({ ok: true as const, apps: [{ pid: 7100, processName: 'python3', usedMiB: 20000, gpuUuid: uuid }] });
    const procs = [...base, proc(7100, 'python3 train.py', { uid: 1001, user: 'bob' })];
    expect((await check.run(fakeFacts({ gpu: twoGpus, processes: procs, computeApps: apps('GPU-other') }))).status).toBe('pass');
    expect((await check.run(fakeFacts({ gpu: twoGpus, processes: procs, computeApps: apps(gpu0.uuid!) }))).status).toBe('fail');
  });
});

describe('procs.leftover and a live run that lost a worker', () => {
  // agg-1 (pid 6100) was SIGKILLed; its engine core 6101 lives on in its group, reparented to init.
  const degraded: RunView = {
    record: { id: '20261130-101500-agg-router', processes: [] } as unknown as RunRecord,
    status: 'degraded', live: true, pids: [6000, 6001],
    lost: [{ name: 'agg-1', role: 'agg', how: 'killed', exitCode: null, signal: 'SIGKILL', at: null, noticed: false, leftPids: [6101], diagnosis: null }],
    logsDir: '/tmp/dd/logs',
  };
  const procs = [
    ...base,
    proc(6000, 'python3 -m dynamo.vllm --model m', { pgid: 6000 }), proc(6001, 'VLLM::EngineCore', { ppid: 6000, pgid: 6000 }),
    proc(6101, 'VLLM::EngineCore', { ppid: 1, pgid: 6100 }),
  ];

  it('counts the engine whose worker died as a leftover, says which worker left it, and how to stop it', async () => {
    const r = await check.run(fakeFacts({
      run: degraded, processes: procs,
      computeApps: { ok: true, apps: [{ pid: 6001, processName: 'VLLM::EngineCor', usedMiB: 3072, gpuUuid: null }, { pid: 6101, processName: 'VLLM::EngineCor', usedMiB: 3072, gpuUuid: null }] },
    }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('1 leftover process outside any live run, holding 3072 MiB of GPU memory (pid 6101)');
    expect(r.details).toEqual([
      'pid 6101  user alice  age 2h13m  GPU 3072 MiB  VLLM::EngineCore  (left by agg-1 of run 20261130-101500-agg-router, which was killed by SIGKILL)',
      // The run's own are said apart, not counted as leftovers (its record here names no process: both are "under" it).
      "live run 20261130-101500-agg-router: 0 processes, as status lists them (none alive), and under them the run's pid 6000 (python3), the run's pid 6001 (VLLM::EngineCore), no supervisor alive: not leftovers",
    ]);
    expect(r.fix).toBe('end the degraded run with what it left: `dynamo-dev teardown --run 20261130-101500-agg-router` (or only the leftover: `kill 6101`)');
  });

  it('passes once the engine is gone: the live workers stay the run\'s own', async () => {
    const r = await check.run(fakeFacts({ run: { ...degraded, lost: [{ ...degraded.lost[0], leftPids: [] }] }, processes: procs.filter((p) => p.pid !== 6101) }));
    expect(r.status).toBe('pass');
  });
});

describe('procs.leftover re-checks before reporting', () => {
  it('a listed engine that exited while the check ran is no leftover (nor is its GPU entry)', async () => {
    const facts = fakeFacts({
      processes: [...base, proc(48211, 'VLLM::EngineCore'), proc(48300, 'python3 -m dynamo.vllm --model m')],
      computeApps: { ok: true, apps: [{ pid: 48211, processName: 'VLLM::EngineCor', usedMiB: 4096, gpuUuid: null }, { pid: 48999, processName: 'python3', usedMiB: 512, gpuUuid: null }] },
    }, { exited: [48211, 48999] });
    const r = await check.run(facts);
    expect(r.status).toBe('fail');
    expect(r.details).toEqual(['pid 48300  user alice  age 2h13m  python3 -m dynamo.vllm --model m']);
    expect(facts.calls.stillRunning).toBe(1);
    const gone = await check.run(fakeFacts({ processes: [...base, proc(48211, 'VLLM::EngineCore')] }, { exited: [48211] }));
    expect(gone.status).toBe('pass');
  });
});

describe('formatAge', () => {
  it('prints ages as a person reads them', () => {
    expect([formatAge(5_000), formatAge(95_000), formatAge(7_980_000), formatAge(2 * 86_400_000 + 3 * 3_600_000)]).toEqual(['5s', '1m35s', '2h13m', '2d3h']);
  });
});
