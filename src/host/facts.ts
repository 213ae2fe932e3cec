import { PYTHON_PROBE_TIMEOUT_MS, type Facts, type LogSet, type RunView } from '../doctor/types.js';
import type {
  CompatFacts, ComputeAppsFacts, FrontendFacts, GpuFacts, HfModelFacts, PortFact, ProcessInfo, PythonFacts, UcxFacts,
} from './types.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import { planPorts } from '../plan/build.js';

export interface FactsOptions {
  env: NodeJS.ProcessEnv;
  recipe: Recipe;
  plan: Plan;
  stateDir: string;
  /** --run ID; default the latest run. */
  runId?: string;
  /** --logs paths: scanned instead of the run's logs. */
  logPaths?: string[];
  /** Interpreter to probe (resolved: --python, $DYNAMO_DEV_PYTHON, recipe, python3). */
  python: string;
  /** Per-probe timeout for external programs. */
  timeoutMs: number;
  /** The run, when the caller already looked it up (doctor does, to pick the recipe). */
  runView?: RunView | null;
}

/** Memoizes an async getter: the probe starts on first ask and every later ask shares it. */
function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/**
 * The run doctor judges (--run ID, else the live one, else the latest), counted as live only when
 * its processes run as us (ownRunView: another user's run in a shared state directory is theirs).
 */
export async function findOwnRunView(stateDir: string, runId?: string): Promise<RunView | null> {
  const [{ findRunView }, { uidsOf }, { ownRunView }] = await Promise.all([
    import('../run/state.js'), import('./proc-files.js'), import('../doctor/prepare.js'),
  ]);
  const view = await findRunView(stateDir, runId);
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  return ownRunView(view, await uidsOf(view?.live ? view.pids : []), uid);
}

/**
 * The real facts: each getter lazily imports its adapter (so doctor --only gpu.driver never loads
 * the process or HF code) and runs it once per invocation.
 */
export function createFacts(o: FactsOptions): Facts {
  const run = once<RunView | null>(async () => (o.runView !== undefined ? o.runView : findOwnRunView(o.stateDir, o.runId)));
  const facts: Facts = {
    env: o.env,
    recipe: o.recipe,
    plan: o.plan,
    self: { uid: typeof process.getuid === 'function' ? process.getuid() : null, pid: process.pid },
    gpu: once<GpuFacts>(async () => (await import('./nvidia-smi.js')).probeGpu(o.env, o.timeoutMs)),
    computeApps: once<ComputeAppsFacts>(async () => (await import('./nvidia-smi.js')).probeComputeApps(o.env, o.timeoutMs)),
    processes: once<ProcessInfo[]>(async () => (await import('./processes.js')).listProcesses()),
    python: once<PythonFacts>(async () => (await import('./python.js')).probePython(o.python, o.recipe.engine, o.env, Math.max(o.timeoutMs, PYTHON_PROBE_TIMEOUT_MS))),
    compat: once<CompatFacts>(async () => (await import('./compat.js')).probeCompat(o.env, o.timeoutMs)),
    hfModel: once<HfModelFacts>(async () => (await import('./hf-cache.js')).probeHfModel(o.recipe.model, o.env)),
    ucx: once<UcxFacts>(async () => (await import('./ucx.js')).probeUcx(o.env, o.timeoutMs)),
    ports: once<PortFact[]>(async () => (await import('./ports.js')).probePorts(planPorts(o.plan))),
    run,
    logs: once<LogSet | null>(async () => {
      const { scanPaths } = await import('./log-scan.js');
      if (o.logPaths && o.logPaths.length > 0) {
        const scan = await scanPaths(o.logPaths);
        return { source: 'paths', label: o.logPaths.join(' '), files: Object.keys(scan.kvTokens).map((path) => ({ path, process: null, role: null })), scan };
      }
      const view = await run();
      if (!view) return null;
      const files = view.record.processes.map((p) => ({ path: p.log, process: p.name, role: p.role }));
      const scan = await scanPaths(files.map((f) => f.path), { missingOk: true });
      return { source: 'run', label: `run ${view.record.id}`, files, scan };
    }),
    frontend: once<FrontendFacts | null>(async () => {
      const view = await run();
      if (!view || !view.live) return null;
      return (await import('./http.js')).probeFrontend(view.record.frontendUrl, o.timeoutMs);
    }),
  };
  return facts;
}
