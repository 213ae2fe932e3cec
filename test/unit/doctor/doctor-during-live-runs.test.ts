import { describe, expect, it } from 'vitest';
import gpuMemory from '../../../src/doctor/checks/gpu.memory.js';
import ports from '../../../src/doctor/checks/ports.free.js';
import procs from '../../../src/doctor/checks/procs.leftover.js';
import { describeShare, ownersOf, runShare } from '../../../src/doctor/run-share.js';
import type { BesideChoice, RunView } from '../../../src/doctor/types.js';
import { livePorts, portsBeside } from '../../../src/doctor/ports-beside.js';
import type { PortFact, ProcessInfo } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { RunRecord } from '../../../src/run/types.js';
import { fakeFacts, healthyGpu, recipeFrom } from '../../helpers/facts.js';

// doctor while runs live side by side (up --name): a live run's processes are its own, counted as
// status counts them; ports are said free or held by which run's which process; a recipe checked
// while runs are live is judged on the ports `up --name` would take, chosen by up's own function.

const proc = (pid: number, cmd: string, o: Partial<ProcessInfo> = {}): ProcessInfo => ({
  pid, ppid: 1, uid: 1000, user: 'alice', cmd, name: cmd.split(' ')[0], startTicks: 1000, ageMs: 60_000, pgid: pid, ...o,
});

/** A detached run: supervisor, frontend and one worker per port list, each worker with an engine core under it. */
function liveRun(id: string, name: string | null, base: number, http: number, systems: number[]): { view: RunView; procs: ProcessInfo[] } {
  const workers = systems.map((port, i) => ({ name: `agg-${i}`, pid: base + 2 + i * 2, pgid: base + 2 + i * 2, ports: { system: port } }));
  const record = {
    id, ...(name ? { name } : {}), supervisor: { pid: base, startTicks: 1, detached: true },
    processes: [{ name: 'frontend', pid: base + 1, pgid: base + 1, ports: { http } }, ...workers],
  } as unknown as RunRecord;
  const list = [
    proc(base, 'node dynamo-dev.js --supervise'),
    proc(base + 1, 'python3 -m dynamo.frontend'),
    ...workers.flatMap((w) => [proc(w.pid, 'python3 -m dynamo.vllm'), proc(w.pid + 1, 'VLLM::EngineCore', { ppid: w.pid, pgid: w.pid })]),
  ];
  return { view: { record, status: 'ready', live: true, pids: list.map((p) => p.pid), lost: [], logsDir: '/x' }, procs: list };
}

const a = liveRun('20261205-100000-000-agg', null, 100, 8000, [8081]);
const b = liveRun('20261205-100100-000-agg-router-b', 'b', 200, 8002, [8083, 8084]);
const held = (name: string, port: number, pid: number | null, cmd: string | null = null): PortFact => ({ name, port, free: false, holderPid: pid, holderCmd: cmd });
const free = (name: string, port: number): PortFact => ({ name, port, free: true, holderPid: null, holderCmd: null });

describe('run-share: a live run counted as status counts it', () => {
  it('planned processes by name and pid, what runs under each, and the supervisor that owns them', () => {
    const s = runShare(b.view, b.procs);
    expect(s.processes).toEqual([{ name: 'frontend', pid: 201 }, { name: 'agg-0', pid: 202 }, { name: 'agg-1', pid: 204 }]);
    expect(describeShare(s)).toBe(
      "run 20261205-100100-000-agg-router-b (b): 3 processes, as status lists them (frontend pid 201, agg-0 pid 202, agg-1 pid 204), "
        + "and under them agg-0's pid 203 (VLLM::EngineCore), agg-1's pid 205 (VLLM::EngineCore), supervised by pid 200 (the detached up)",
    );
  });
  it('a run that lost a worker: the count says how many of its planned processes are alive, and which is gone', () => {
    const lost = { ...b.view, pids: b.view.pids.filter((p) => p !== 204 && p !== 205) };
    const s = runShare(lost, b.procs.filter((p) => p.pid !== 204 && p.pid !== 205));
    expect(s.gone).toEqual(['agg-1']);
    expect(describeShare(s)).toMatch(/^run \S+ \(b\): 2 of 3 processes alive, as status lists them \(frontend pid 201, agg-0 pid 202; agg-1 gone\), and under them agg-0's pid 203/);
  });
  it('a pid of no live run has no owner; one of each run is named with its run and process', () => {
    const o = ownersOf([101, 205, 200, 999], [a.view, b.view], [...a.procs, ...b.procs]);
    expect(o.get(101)).toMatchObject({ runId: a.view.record.id, process: 'frontend', supervisor: false, ref: a.view.record.id });
    expect(o.get(205)).toMatchObject({ run: 'run 20261205-100100-000-agg-router-b (b)', process: 'agg-1', ref: 'b' });
    expect(o.get(200)).toMatchObject({ process: null, supervisor: true });
    expect(o.has(999)).toBe(false);
  });
});

describe('procs.leftover with two live runs', () => {
  const all = [...a.procs, ...b.procs];
  it('every live run\'s processes are its own: none is a leftover, and each run is counted as status lists it', async () => {
    const r = await procs.run(fakeFacts({ processes: all, run: b.view, liveRuns: [b.view, a.view] }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('live run 20261205-100100-000-agg-router-b (b): 3 processes, as status lists them (frontend pid 201, agg-0 pid 202, agg-1 pid 204)');
    expect(r.summary).toContain('; live run 20261205-100000-000-agg: 2 processes, as status lists them (frontend pid 101, agg-0 pid 102), and under them agg-0\'s pid 103 (VLLM::EngineCore), supervised by pid 100 (the detached up)');
  });
  it('only the judged run known as live (before: the other run\'s engines were "leftovers outside any live run")', async () => {
    // What doctor saw before it asked for every live run: run a's frontend, worker and engine core as leftovers.
    const r = await procs.run(fakeFacts({ processes: all, run: b.view, liveRuns: [b.view] }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('3 leftover processes outside any live run (pid 101, 102, 103)');
  });
  it('a real leftover beside two live runs still fails, and the live runs are said apart as not leftovers', async () => {
    const r = await procs.run(fakeFacts({ processes: [...all, proc(900, 'VLLM::EngineCore')], run: b.view, liveRuns: [b.view, a.view] }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('1 leftover process outside any live run (pid 900)');
    expect(r.details.slice(1)).toEqual([
      expect.stringMatching(/^live run 20261205-100100-000-agg-router-b \(b\): 3 processes, .*: not leftovers$/),
      expect.stringMatching(/^live run 20261205-100000-000-agg: 2 processes, .*: not leftovers$/),
    ]);
  });
});

describe('ports.free while runs are live', () => {
  it('the judged run\'s own ports: held by which of its processes, and which are free', async () => {
    const facts = fakeFacts({
      ports: [held('frontend.http', 8002, 201), held('agg-0.system', 8083, 202), held('agg-1.system', 8084, 204), free('agg-0.kvEvents', 20080)],
      processes: [...a.procs, ...b.procs], run: b.view, liveRuns: [b.view, a.view],
    });
    const r = await ports.run(facts);
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('3 held by run 20261205-100100-000-agg-router-b (b) itself (8002 frontend.http pid 201, 8083 agg-0.system pid 202, 8084 agg-1.system pid 204); 1 free: 20080 agg-0.kvEvents');
  });
  it('a port of the judged plan held by ANOTHER live run is a conflict naming that run and process, not "ours"', async () => {
    // --run of a stopped run (or a plan started without --name) whose http port live run a holds.
    const r = await ports.run(fakeFacts({ ports: [held('frontend.http', 8000, 101, 'python3 -m dynamo.frontend'), free('agg-0.system', 8081)], processes: a.procs, liveRuns: [a.view] }, { planRunId: null }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('port 8000 (frontend.http) is held by live run 20261205-100000-000-agg (frontend, pid 101)');
    expect(r.fix).toBe('start it beside that run with `dynamo-dev up test --name NAME` (up moves its ports past a live run\'s), or stop it: `dynamo-dev teardown --run 20261205-100000-000-agg`');
    expect(r.evidence.heldBy).toEqual([{ port: 8000, name: 'frontend.http', pid: 101, run: '20261205-100000-000-agg', process: 'frontend', own: false }]);
  });
  it('a recipe checked beside live runs: the ports up --name takes, and whose the recipe\'s own are', async () => {
    const recipe = recipeFrom({ workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.3 }] });
    const base = buildPlan({ recipe, runDir: '/tmp/x', gpuTotalMiB: 8188 });
    const lives = [b.view, a.view];
    const choice = await portsBeside(recipe, base, lives, { free: async () => true });
    expect(choice.ok).toBe(true);
    if (!choice.ok) return;
    // The same line up --name prints.
    expect(choice.line).toBe('ports: http 8001, system 8085-8086 (the recipe\'s 8000, 8081 held by run 20261205-100000-000-agg)');
    const plan = buildPlan({ recipe: choice.recipe, runDir: '/tmp/x', gpuTotalMiB: 8188 });
    const beside: BesideChoice = { command: 'dynamo-dev up ./r.yaml --name NAME', runs: ['run b', 'run a'], moved: choice.moved, refused: null };
    const r = await ports.run(fakeFacts({
      ports: [free('frontend.http', 8001), free('agg-0.system', 8085), free('agg-1.system', 8086)],
      liveRuns: lives,
    }, { recipe: choice.recipe, plan, planRunId: null, beside }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('`dynamo-dev up ./r.yaml --name NAME` would take http 8001, system 8085-8086, all free; '
      + 'the recipe\'s own ports are taken: 8000 frontend pid 101, 8081 agg-0 pid 102 held by run 20261205-100000-000-agg (without --name, up refuses while a run is live)');
  });
  it('beside live runs with no room left: fail with up\'s reason and fix', async () => {
    const beside: BesideChoice = { command: 'dynamo-dev up agg --name NAME', runs: ['run a'], moved: [], refused: { message: 'no free range for ports.system from 32766 up (live runs and other programs hold the ports)', fix: 'set another with --set ports.system=PORT' } };
    const r = await ports.run(fakeFacts({ ports: [], liveRuns: [a.view] }, { planRunId: null, beside }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('`dynamo-dev up agg --name NAME` finds no ports beside run a: no free range for ports.system from 32766 up (live runs and other programs hold the ports)');
    expect(r.fix).toBe('set another with --set ports.system=PORT');
  });
  it('livePorts: every port of every live run, with its run (name first) and process', () => {
    expect([...livePorts([b.view, a.view])].map(([p, h]) => `${p} ${h.run} ${h.process} ${h.pid}`)).toEqual([
      '8002 b frontend 201', '8083 b agg-0 202', '8084 b agg-1 204', '8000 20261205-100000-000-agg frontend 101', '8081 20261205-100000-000-agg agg-0 102',
    ]);
  });
  it('portsBeside moves past a port in use by another program too, and says so', async () => {
    const recipe = recipeFrom({});
    const plan = buildPlan({ recipe, runDir: '/tmp/x', gpuTotalMiB: 8188 });
    const c = await portsBeside(recipe, plan, [a.view], { free: async (p) => p !== 8001 });
    expect(c.ok && c.line).toBe('ports: http 8002, system 8082 (the recipe\'s 8000, 8081 held by run 20261205-100000-000-agg)');
  });
});

describe('gpu.memory while runs are live', () => {
  const gpu = healthyGpu.ok ? healthyGpu.gpus[0] : (undefined as never);
  // 3000 MiB free; run a's engine holds 3000; the plan needs 0.38 x 8188 = 3112.
  const facts = (planRunId: string | null) => fakeFacts({
    gpu: { ...healthyGpu, gpus: [{ ...gpu, memoryFreeMiB: 3000 }] } as typeof healthyGpu,
    computeApps: { ok: true, apps: [{ pid: 103, processName: 'VLLM::EngineCore', usedMiB: 3000, gpuUuid: gpu.uuid }] },
    processes: a.procs, run: a.view, liveRuns: [a.view],
  }, { planRunId });
  it('the judged run\'s own memory is its budget: it passes', async () => {
    const r = await gpuMemory.run(facts(a.view.record.id));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('(+3000 MiB held by the live run)');
  });
  it('a recipe to start beside it does not get that memory: fail, naming the live run, whose teardown is the fix (not --orphans)', async () => {
    const r = await gpuMemory.run(facts(null));
    expect(r.status).toBe('fail');
    expect(r.details).toEqual(['pid 103 VLLM::EngineCore: 3000 MiB (live run 20261205-100000-000-agg, agg-0)']);
    expect(r.fix).toMatch(/^stop a live run holding it: `dynamo-dev teardown --run 20261205-100000-000-agg`; or lower the workers' gpuMemoryUtilization/);
  });
});
