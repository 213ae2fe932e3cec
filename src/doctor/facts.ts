import { NIXL_PROBE_TIMEOUT_MS, PYTHON_PROBE_TIMEOUT_MS, type BesideChoice, type Facts, type LogSet, type RunView } from './types.js';
import type {
  CompatFacts, ComputeAppsFacts, FrontendFacts, GpuFacts, HfModelFacts, ModelSourceFacts, PortFact, ProcessInfo, PythonFacts, UcxFacts,
} from '../host/types.js';
import type { Plan } from '../plan/types.js';
import type { NixlProbeFacts } from '../host/ucx/nixl-probe.js';
import type { Recipe } from '../recipe/schema.js';
import { planPorts } from '../plan/build.js';
import type { EarlyFact, ProbeTarget } from './early-probes.js';
import type { DoctorRuns, NoLogs } from './prepare.js';
import { NO_LOGS } from './log-view.js';

export interface FactsOptions {
  /** The live run whose own plan is judged; absent: a plan not started yet (up's preflight, --recipe). */
  planRunId?: string | null;
  /** doctor --recipe beside live runs: the ports up --name chose (the plan already carries them). */
  beside?: BesideChoice | null;
  env: NodeJS.ProcessEnv;
  recipe: Recipe;
  plan: Plan;
  stateDir: string;
  /** --run ID: the run the log checks judge. */
  runId?: string;
  /** --logs paths: scanned instead of the run's logs. */
  logPaths?: string[];
  /** Interpreter to probe (resolved: --python, $DYNAMO_DEV_PYTHON, recipe, python3). */
  python: string;
  /** Per-probe timeout for external programs. */
  timeoutMs: number;
  /** The runs, when the caller already looked them up (doctor does, to pick the recipe). */
  runs?: DoctorRuns;
  /** Whose logs the log checks judge (chooseLogRun), when the caller chose already. */
  logRun?: { run: RunView | null; none: NoLogs | null };
  /** Probes started before the recipe was known (startEarlyProbes): used instead of starting them again. */
  early?: EarlyProbes;
}

/** Probes already running, keyed like the facts they answer. */
export interface EarlyProbes {
  /** The Python probe, started on a guess of interpreter and engine: used only if the guess was right. */
  python?: ProbeTarget & { facts: Promise<PythonFacts> };
  gpu?: Promise<GpuFacts>;
  computeApps?: Promise<ComputeAppsFacts>;
  processes?: Promise<ProcessInfo[]>;
  compat?: Promise<CompatFacts>;
  ucx?: Promise<UcxFacts>;
}

/** More than loading the recipe and the report code ever takes before the checks start. */
const EARLY_HEAD_START_MS = 2000;

const pythonProbe = (interpreter: string, engine: 'vllm' | 'mocker', env: NodeJS.ProcessEnv, timeoutMs: number, headStartMs = 0) =>
  import('../host/python/python.js').then((m) => m.probePython(interpreter, engine, env, Math.max(timeoutMs, PYTHON_PROBE_TIMEOUT_MS) + headStartMs));

/**
 * Starts the wanted recipe-free probes now, the Python probe first (it takes longest: an
 * interpreter start and heavy imports), the others meanwhile. Each result is a promise that
 * never rejects (the adapters turn failures into facts).
 */
export function startEarlyProbes(o: { env: NodeJS.ProcessEnv; timeoutMs: number; wants: ReadonlySet<EarlyFact>; python: ProbeTarget }): EarlyProbes {
  const early: EarlyProbes = {};
  // The checks' deadlines start later (once the recipe is loaded) and must stay the ones that
  // fire, naming what hung: a probe started early gets that head start on its own deadline.
  let first: Promise<unknown> = Promise.resolve();
  if (o.wants.has('python')) {
    const facts = pythonProbe(o.python.interpreter, o.python.engine, o.env, o.timeoutMs, EARLY_HEAD_START_MS);
    early.python = { ...o.python, facts };
    first = import('../host/python/python.js'); // the others are spawned once the Python probe has been
  }
  const t = o.timeoutMs + EARLY_HEAD_START_MS;
  const after = <M, T>(load: () => Promise<M>, run: (m: M) => Promise<T>): Promise<T> => first.then(load).then(run);
  if (o.wants.has('gpu')) early.gpu = after(() => import('../host/gpu/nvidia-smi.js'), (m) => m.probeGpu(o.env, t));
  if (o.wants.has('computeApps')) early.computeApps = after(() => import('../host/gpu/nvidia-smi.js'), (m) => m.probeComputeApps(o.env, t));
  if (o.wants.has('ucx')) early.ucx = after(() => import('../host/ucx/ucx.js'), (m) => m.probeUcx(o.env, t));
  if (o.wants.has('compat')) early.compat = after(() => import('../host/gpu/compat.js'), (m) => m.probeCompat(o.env, t));
  if (o.wants.has('processes')) early.processes = after(() => import('../host/procs/processes.js'), (m) => m.listProcesses());
  return early;
}

/**
 * The NIXL probe as a worker of the plan would meet it: the run's interpreter, the user's
 * environment plus the first NIXL worker's own (CUDA_VISIBLE_DEVICES, UCX_* of the recipe), VRAM
 * buffers where nvidia-smi sees a GPU (the script falls back to DRAM, saying why), DRAM otherwise.
 */
async function nixlProbe(o: FactsOptions, facts: Facts, withoutTls: boolean): Promise<NixlProbeFacts> {
  const [{ probeNixl }, { nixlWorker }] = await Promise.all([import('../host/ucx/nixl-probe.js'), import('../plan/nixl.js')]);
  const worker = nixlWorker(o.plan);
  const env: Record<string, string | undefined> = { ...o.env, ...(worker?.env ?? {}) };
  if (withoutTls) delete env.UCX_TLS;
  const [gpu, live] = await Promise.all([facts.gpu(), facts.liveRuns()]);
  // Two CUDA contexts cost hundreds of MB of GPU memory: never while a run of ours holds the GPU.
  const dramWhy = !gpu.ok || gpu.gpus.length === 0 ? 'no GPU here' : live.length > 0 ? `${live.length === 1 ? 'a run is' : `${live.length} runs are`} live on the GPU: its memory is left alone` : null;
  const mem = dramWhy === null ? 'auto' : 'dram';
  return probeNixl({ python: o.python, env, mem, dramWhy, device: 0, timeoutMs: mem === 'auto' ? NIXL_PROBE_TIMEOUT_MS.vram : NIXL_PROBE_TIMEOUT_MS.dram });
}

/** Memoizes an async getter: the probe starts on first ask and every later ask shares it. */
function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/**
 * The runs doctor knows of, from one scan of /proc: the live run, the one --run names, the newest.
 * A live run counts only when its processes run as us (ownRunView: another user's run in a shared
 * state directory is theirs). --run with an unknown id is an input error.
 */
export async function findDoctorRuns(stateDir: string, runId?: string): Promise<DoctorRuns> {
  const [{ runsToJudge }, { uidsOf }, { ownRunView, runPids }] = await Promise.all([
    import('../run/which-run.js'), import('../host/procs/proc-files.js'), import('./prepare.js'),
  ]);
  // Which runs: the rule said once (run/which-run.ts).
  const { views, byId } = await runsToJudge(stateDir, runId);
  const allLive = views.filter((v) => v.live);
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const uids = await uidsOf([...allLive.flatMap(runPids), ...(byId?.live ? runPids(byId) : [])]);
  // Several runs may live side by side (`up --name`): each one's processes, ports and GPU memory are ours.
  const lives = allLive.map((v) => ownRunView(v, uids, uid)!).filter((v) => v.live);
  const live = allLive[0] ?? null;
  const ownLive = ownRunView(live, uids, uid);
  return {
    live: ownLive?.live ? ownLive : null,
    lives,
    allLive,
    byId: byId && byId.record.id === live?.record.id ? ownLive : ownRunView(byId, uids, uid),
    latest: views[0] ?? null,
  };
}

/**
 * The real facts: each getter lazily imports its adapter (so doctor --only gpu.driver never loads
 * the process or HF code) and runs it once per invocation.
 */
export function createFacts(o: FactsOptions): Facts {
  const early = o.early ?? {};
  const runs = once<DoctorRuns>(async () => o.runs ?? findDoctorRuns(o.stateDir, o.runId));
  const logRun = once(async () => {
    if (o.logRun) return o.logRun;
    const { chooseLogRun } = await import('./prepare.js');
    return chooseLogRun({ runs: await runs(), runId: o.runId, now: Date.now() });
  });
  const run = once<RunView | null>(async () => (await logRun()).run);
  const facts: Facts = {
    env: o.env,
    recipe: o.recipe,
    plan: o.plan,
    self: { uid: typeof process.getuid === 'function' ? process.getuid() : null, pid: process.pid },
    planRunId: o.planRunId ?? null,
    beside: o.beside ?? null,
    gpu: once<GpuFacts>(async () => early.gpu ?? (await import('../host/gpu/nvidia-smi.js')).probeGpu(o.env, o.timeoutMs)),
    computeApps: once<ComputeAppsFacts>(async () => early.computeApps ?? (await import('../host/gpu/nvidia-smi.js')).probeComputeApps(o.env, o.timeoutMs)),
    processes: once<ProcessInfo[]>(async () => early.processes ?? (await import('../host/procs/processes.js')).listProcesses()),
    python: once<PythonFacts>(async () => {
      const guess = early.python;
      return guess && guess.interpreter === o.python && guess.engine === o.recipe.engine
        ? guess.facts
        : pythonProbe(o.python, o.recipe.engine, o.env, o.timeoutMs);
    }),
    compat: once<CompatFacts>(async () => early.compat ?? (await import('../host/gpu/compat.js')).probeCompat(o.env, o.timeoutMs)),
    hfModel: once<HfModelFacts>(async () => (await import('../host/hf/hf-cache.js')).probeHfModel(o.recipe.model, o.env)),
    // As a worker sees it: the recipe's own environment may set HF_HUB_OFFLINE or HF_ENDPOINT.
    modelSource: once<ModelSourceFacts>(async () => {
      const m = await import('../host/hf/model-source.js');
      return m.probeModelSource(o.recipe.model, m.modelEnv(o.env, o.recipe));
    }),
    ucx: once<UcxFacts>(async () => early.ucx ?? (await import('../host/ucx/ucx.js')).probeUcx(o.env, o.timeoutMs)),
    nixl: once<NixlProbeFacts>(async () => nixlProbe(o, facts, false)),
    nixlWithoutTls: once<NixlProbeFacts>(async () => nixlProbe(o, facts, true)),
    hostCpu: once(async () => (await import('../host/system/cpu.js')).probeHostCpu()),
    // The holders of taken ports are looked for in the one process list doctor shares.
    ports: once<PortFact[]>(async () => (await import('../host/net/ports.js')).probePorts(planPorts(o.plan), { processes: () => facts.processes() })),
    run,
    liveRun: once<RunView | null>(async () => (await runs()).live),
    liveRuns: once<RunView[]>(async () => (await runs()).lives),
    logs: once<LogSet | null>(async () => {
      const { scanPaths } = await import('../host/logs/log-scan.js');
      if (o.logPaths && o.logPaths.length > 0) {
        const scan = await scanPaths(o.logPaths);
        return { source: 'paths', label: o.logPaths.join(' '), files: Object.keys(scan.kvTokens).map((path) => ({ path, process: null, role: null })), scan };
      }
      const view = await run();
      if (!view) return null;
      const files = view.record.processes.map((p) => ({ path: p.log, process: p.name, role: p.role }));
      // skipOdd: a FIFO put where a process log was is not read (said by the checks), never a crashed check.
      const scan = await scanPaths(files.map((f) => f.path), { missingOk: true, skipOdd: true });
      // A process of the run that ended badly is a finding too, quoted with the best line its log has.
      const { addExitFindings } = await import('../run/exit-findings.js');
      return { source: 'run', label: `run ${view.record.id}`, files, scan: await addExitFindings(scan, view.record, { lost: view.lost }) };
    }),
    noLogs: once<NoLogs>(async () => (await logRun()).none ?? { status: 'skip', summary: NO_LOGS, fix: null }),
    frontend: once<FrontendFacts | null>(async () => {
      const view = await run();
      if (!view || !view.live) return null;
      return (await import('../host/net/http.js')).probeFrontend(view.record.frontendUrl, o.timeoutMs, view.record.model);
    }),
    async stillRunning(procs) {
      const { readStartTicks } = await import('../run/proc.js');
      const out = new Set<number>();
      for (const p of procs) {
        const ticks = readStartTicks(p.pid);
        if (ticks !== null && (p.startTicks === null || ticks === p.startTicks)) out.add(p.pid);
      }
      return out;
    },
    async otherRuns(pids) {
      if (pids.length === 0) return new Map();
      return (await import('../run/other-runs.js')).otherLiveRuns(o.stateDir, pids);
    },
  };
  return facts;
}
