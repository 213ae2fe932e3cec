import type { ResolvedPython } from '../host/python/python.js';
import { buildPlan } from '../plan/build.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import { newRunId, runDir } from './paths.js';
import { PROBE_TIMEOUT_MS } from './preflight.js';
import { kvLineHiddenBy } from './readiness.js';
import { markerFor, RUN_MARKER } from './run-scan.js';

// A run's plan as `up` and `bench` make it, before anything starts: the run's id, the environment
// its probes run with, and the plan for a run folder, with what the machine tells (the GPU's total
// memory, the model's KV shape when cached, the installed Dynamo's version).

export interface PlannedRun {
  runId: string;
  /** The user's environment plus the run's marker: whatever a probe leaves behind is found as the run's. */
  probeEnv: NodeJS.ProcessEnv;
  /** The plan for a run folder (the id may still change: a suffix, ports beside live runs). */
  planAt: (dir: string, recipe?: Recipe) => Plan;
  plan: Plan;
}

export interface PlanRunInput {
  recipe: Recipe;
  /** How the user named the recipe (recorded in the plan). */
  source: string;
  python: ResolvedPython;
  env: NodeJS.ProcessEnv;
  stateDir: string;
  /** `up --name`: part of the run id. */
  name?: string;
  /** Nothing will run (--dry-run, --script): probes need no marker. */
  dryRun?: boolean;
  /** Told the installed Dynamo's version (null: none read) as soon as it is known, before the slower GPU and model probes end. */
  onDynamoVersion?: (version: string | null) => void;
}

export async function planRun(i: PlanRunInput): Promise<PlannedRun> {
  const runId = newRunId(i.name ? `${i.recipe.name}-${i.name}` : i.recipe.name);
  // The interpreter runs before the run does (its Dynamo version, preflight's imports): with the
  // run's marker, whatever it leaves behind (a helper it double-forked) is found and stopped as the
  // run's by status and teardown (run-scan.ts), never left alive while teardown says nothing remains.
  const probeEnv = i.dryRun ? i.env : { ...i.env, [RUN_MARKER]: markerFor(i.stateDir, runId) };
  const planAt = await planner(probeEnv, i.recipe, i.python, i.source, i.onDynamoVersion);
  return { runId, probeEnv, planAt, plan: planAt(runDir(i.stateDir, runId)) };
}

/** The plan for a run dir, with what the machine tells: the GPU's total memory, the model's KV shape when cached. */
async function planner(
  env: NodeJS.ProcessEnv, recipe: Recipe, from: ResolvedPython, recipeSource: string, onVersion?: (v: string | null) => void,
): Promise<(dir: string, r?: Recipe) => Plan> {
  const python = from.interpreter;
  let gpuTotalMiB: number | null = null;
  let model: { bytesPerToken: number; weightsMiB: number | null } | null = null;
  // Flags and env follow the installed Dynamo; read concurrently with the GPU and model probes.
  let host: import('../plan/cpu.js').HostCpu | null = null;
  const version = import('../host/python/python.js').then((m) => m.probeDynamoVersion(python, env, PROBE_TIMEOUT_MS)).catch(() => null)
    .then((v) => {
      onVersion?.(v);
      return v;
    });
  if (recipe.engine !== 'mocker' && recipe.device === 'cpu') {
    // The CPU device: host RAM and cores instead of a GPU (plan/cpu.ts).
    [host, model] = await Promise.all([
      import('../host/system/cpu.js').then((m) => m.probeHostCpu()),
      import('../host/hf/model-config.js').then((m) => m.modelKvInfo(recipe.model, env)),
    ]);
  } else if (recipe.engine !== 'mocker') {
    const [gpu, info] = await Promise.all([
      import('../host/gpu/nvidia-smi.js').then((m) => m.probeGpu(env, PROBE_TIMEOUT_MS)).catch(() => null),
      // Not cached just means no KV estimate: the first start downloads it.
      import('../host/hf/model-config.js').then((m) => m.modelKvInfo(recipe.model, env)),
    ]);
    if (gpu?.ok) gpuTotalMiB = gpu.gpus.find((g) => g.index === recipe.gpu)?.memoryTotalMiB ?? null;
    model = info;
  }
  const dynamoVersion = await version;
  return (dir: string, r: Recipe = recipe) => buildPlan({ recipe: r, runDir: dir, gpuTotalMiB, model, python, pythonFrom: from, source: recipeSource, dynamoVersion, host });
}

/** Readiness by the KV line cannot work when VLLM_LOGGING_LEVEL hides INFO: the warning to say before anything starts, or null. */
export function hiddenKvLineWarning(env: NodeJS.ProcessEnv, plan: Plan): string | null {
  const hidden = plan.processes
    .filter((p) => p.ready.logPattern)
    .map((p) => ({ name: p.name, level: kvLineHiddenBy({ ...env, ...p.env }) }))
    .filter((h): h is { name: string; level: string } => h.level !== null);
  if (hidden.length === 0) return null;
  return `warning: VLLM_LOGGING_LEVEL=${hidden[0].level} hides vLLM's INFO line "GPU KV cache size: N tokens" that ` +
    `${hidden.map((h) => h.name).join(', ')} must log to be ready (and to let the next worker start): up will wait until --ready-timeout; ` +
    `unset VLLM_LOGGING_LEVEL or set it to INFO`;
}
