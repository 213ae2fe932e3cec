import type { BesideChoice, Facts, LogSet, RunView } from '../../src/doctor/types.js';
import { NO_LOGS } from '../../src/doctor/log-view.js';
import type { NoLogs } from '../../src/doctor/prepare.js';
import type { OtherRun } from '../../src/run/other-runs.js';
import type {
  CompatFacts, ComputeAppsFacts, FrontendFacts, GpuFacts, HfModelFacts, ModelSourceFacts, PortFact, ProcessInfo, PythonFacts, UcxFacts,
} from '../../src/host/types.js';
import type { NixlProbeFacts } from '../../src/host/ucx/nixl-probe.js';
import { buildPlan } from '../../src/plan/build.js';
import type { HostCpuFacts } from '../../src/host/system/cpu.js';
import type { Plan } from '../../src/plan/types.js';
import { validateRecipe } from '../../src/recipe/load.js';
import type { Recipe, RecipeInput } from '../../src/recipe/schema.js';

/** A healthy laptop: one 8 GB GPU on driver 570 (CUDA 12.8), torch cu128, nothing else running. */
export const healthyGpu: GpuFacts = {
  ok: true,
  driverVersion: '570.133.07',
  cudaVersion: '12.8',
  gpus: [{
    index: 0, name: 'NVIDIA GeForce RTX 4060 Laptop GPU', uuid: 'GPU-3f1c2a9e-8d7b-4c55-9a0e-1b2c3d4e5f60',
    driverVersion: '570.133.07', memoryTotalMiB: 8188, memoryUsedMiB: 512, memoryFreeMiB: 7676, computeCap: '8.9',
    pciBusId: '00000000:01:00.0',
  }],
};

/** The NIXL probe where the interpreter has no NIXL (its real import error). */
export const nixlNotImportable: NixlProbeFacts = {
  python: 'python3', runError: null, timedOut: false, timeoutMs: 9000, notImportable: "ModuleNotFoundError: No module named 'nixl'",
  report: { role: 'initiator', pid: 4300, stage: 'import', error: "ModuleNotFoundError: No module named 'nixl'", targetExit: 1, elapsedMs: 80 },
  lane: null, complaints: { ucxErrors: [], ucxWarnings: [], nixlErrors: [] }, bytes: 4 << 20, ucxEnv: {}, pgid: 4300, killedLeftovers: [], elapsedMs: 120, output: '',
};

export interface FactValues {
  gpu: GpuFacts;
  computeApps: ComputeAppsFacts;
  processes: ProcessInfo[];
  python: PythonFacts;
  compat: CompatFacts;
  hfModel: HfModelFacts;
  modelSource: ModelSourceFacts;
  ucx: UcxFacts;
  /** Default: NIXL not importable (the static reading judges). */
  nixl: NixlProbeFacts;
  nixlWithoutTls: NixlProbeFacts;
  /** The host of the CPU device: 24 GiB (18 available), 2 cores, AVX-512 with BF16 by default. */
  hostCpu: HostCpuFacts;
  ports: PortFact[];
  run: RunView | null;
  /** Default: `run` when it is live. */
  liveRun: RunView | null;
  /** Default: `liveRun` alone. */
  liveRuns: RunView[];
  logs: LogSet | null;
  noLogs: NoLogs;
  frontend: FrontendFacts | null;
  /**
   * Processes of live runs of other state directories (Facts.otherRuns answers for these pids).
   * As the real fact, it never answers for a process that is not of our uid (OUR_UID).
   */
  otherRuns: OtherRun[];
}

export const recipeFrom = (r: Partial<RecipeInput> = {}): Recipe =>
  validateRecipe({ name: 'test', workers: [{ role: 'agg', gpuMemoryUtilization: 0.38 }], ...r }, 'test');

/** The uid fakeFacts runs as (facts.self.uid). */
const OUR_UID = 1000;

/**
 * Facts for check unit tests: healthy defaults, overridden per test. Each getter counts its calls
 * (facts.calls) so tests can assert a probe ran once.
 */
export function fakeFacts(values: Partial<FactValues> = {}, o: { recipe?: Recipe; plan?: Plan; env?: Record<string, string | undefined>; exited?: number[]; planRunId?: string | null; beside?: BesideChoice | null } = {}): Facts & { calls: Record<string, number> } {
  const recipe = o.recipe ?? recipeFrom();
  const plan = o.plan ?? buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
  const defaults: FactValues = {
    gpu: healthyGpu,
    computeApps: { ok: true, apps: [] },
    processes: [],
    python: {
      interpreter: 'python3', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: '12.8',
      modules: {
        dynamo: { ok: true, version: '1.0.0', error: null },
        vllm: { ok: true, version: '0.11.0', error: null },
        torch: { ok: true, version: '2.8.0+cu128', error: null },
      },
    },
    compat: { ldLibraryPathCompat: [], ldconfigCompat: [], ldconfigLibcuda: ['/lib/x86_64-linux-gnu/libcuda.so.1'], ldconfigError: null },
    hfModel: {
      cacheRoot: '/home/u/.cache/huggingface/hub', model: recipe.model,
      modelDir: `/home/u/.cache/huggingface/hub/models--${recipe.model.replace('/', '--')}`,
      snapshot: 'abc123', configPath: null, locks: [], incompleteBlobs: [], locksUnknown: false,
    },
    modelSource: {
      kind: 'hub', model: recipe.model, cacheRoot: '/home/u/.cache/huggingface/hub',
      snapshotDir: `/home/u/.cache/huggingface/hub/models--${recipe.model.replace('/', '--')}/snapshots/abc123`,
      snapshotFiles: ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'],
      offline: null, endpoint: 'https://huggingface.co', hub: null, proxy: null,
    },
    ucx: { tls: null, transports: null, ucxInfoError: 'ucx_info not found on PATH', version: null },
    nixl: nixlNotImportable,
    nixlWithoutTls: nixlNotImportable,
    hostCpu: { memTotalMiB: 24104, availableMiB: 18432, cpus: [0, 1], arch: 'x64', flags: new Set(['avx2', 'avx512f', 'avx512_bf16']) },
    ports: [],
    run: null,
    liveRun: values.run?.live ? values.run : null,
    liveRuns: [],
    logs: null,
    noLogs: { status: 'skip', summary: NO_LOGS, fix: null },
    frontend: null,
    otherRuns: [],
  };
  const v = { ...defaults, ...values };
  // As the real fact: only runs that are live.
  if (!values.liveRuns) v.liveRuns = v.liveRun?.live ? [v.liveRun] : [];
  const calls: Record<string, number> = {};
  const getter = <K extends keyof FactValues>(k: K) => async () => {
    calls[k] = (calls[k] ?? 0) + 1;
    return v[k];
  };
  return {
    env: o.env ?? {},
    recipe,
    plan,
    self: { uid: OUR_UID, pid: 4242 },
    // Default: doctor without --recipe during a live run, which judges that run's own plan.
    planRunId: o.planRunId !== undefined ? o.planRunId : v.liveRun?.live ? v.liveRun.record?.id ?? null : null,
    beside: o.beside ?? null,
    calls,
    gpu: getter('gpu'),
    computeApps: getter('computeApps'),
    processes: getter('processes'),
    python: getter('python'),
    compat: getter('compat'),
    hfModel: getter('hfModel'),
    modelSource: getter('modelSource'),
    hostCpu: getter('hostCpu'),
    ucx: getter('ucx'),
    nixl: getter('nixl'),
    nixlWithoutTls: getter('nixlWithoutTls'),
    ports: getter('ports'),
    run: getter('run'),
    liveRun: getter('liveRun'),
    liveRuns: getter('liveRuns'),
    logs: getter('logs'),
    noLogs: getter('noLogs'),
    frontend: getter('frontend'),
    // Every listed process still runs unless the test says it exited meanwhile.
    async stillRunning(procs) {
      calls.stillRunning = (calls.stillRunning ?? 0) + 1;
      return new Set(procs.map((p) => p.pid).filter((pid) => !(o.exited ?? []).includes(pid)));
    },
    async otherRuns(pids) {
      calls.otherRuns = (calls.otherRuns ?? 0) + 1;
      // The real fact reads the uid of /proc/PID: a process not listed, or not ours, is never another run's.
      const ours = (pid: number) => v.processes.some((p) => p.pid === pid && p.uid === OUR_UID);
      return new Map(v.otherRuns.filter((r) => pids.includes(r.pid) && ours(r.pid)).map((r) => [r.pid, r]));
    },
  };
}
