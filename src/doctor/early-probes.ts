import type { Check, RunView } from './types.js';

// What doctor can start before its recipe is loaded (yaml and zod alone take ~70 ms to load): the
// probes of the machine that need no recipe, and the Python probe, the longest of all (an
// interpreter start plus importing torch and vLLM), on a guess of the interpreter and engine
// that is checked once the recipe is known. Pure: the starting is in doctor/facts.ts.

export type EarlyFact = 'python' | 'gpu' | 'computeApps' | 'processes' | 'compat' | 'ucx';

/**
 * The recipe-free probes each check asks for. A check missing here, or asking for more later,
 * still gets its facts when it asks (the getters are lazy): this only decides what starts early.
 * test/unit/doctor/early-probes.test.ts holds it to what the checks really ask.
 */
export const EARLY_FACTS: Readonly<Record<string, readonly EarlyFact[]>> = {
  'gpu.driver': ['gpu'],
  'gpu.memory': ['gpu', 'computeApps'],
  'cuda.compat': ['python', 'gpu', 'compat'],
  'python.env': ['python'],
  'procs.leftover': ['gpu', 'computeApps', 'processes'],
  'hf.locks': [],
  // ucx_info only for plans that move KV over NIXL (not the default agg): asked when needed.
  'ucx.transports': [],
  // The process list only when a port is taken (to name its holder): not worth starting early.
  'ports.free': [],
  'kv.events': [],
  'kv.allocated': [],
  'frontend.models': [],
  'logs.errors': [],
};

export function earlyFactsFor(checks: readonly Pick<Check, 'id'>[]): Set<EarlyFact> {
  return new Set(checks.flatMap((c) => EARLY_FACTS[c.id] ?? []));
}

export interface ProbeTarget {
  interpreter: string;
  engine: 'vllm' | 'mocker';
}

/** A top-level `key: value` of recipe YAML (plain or quoted scalar), or null. */
function topLevel(text: string, key: string): string | null {
  const m = new RegExp(`^${key}:[ \\t]*(["']?)([^"'#\\r\\n]*?)\\1[ \\t]*(?:#.*)?$`, 'm').exec(text);
  return m && m[2] !== '' ? m[2] : null;
}

/**
 * The interpreter and engine doctor will probe, as resolveDoctorTarget will decide them: --python
 * (or $DYNAMO_DEV_PYTHON) over the recipe's `python`; the recipe from --recipe (its text, read
 * without parsing), else the live run's, else the built-in agg (python3, vllm). A guess for
 * unusual YAML (anchors, flow style): doctor compares it with the loaded recipe and probes again
 * if it was wrong.
 */
export function guessProbeTarget(o: { python?: string; recipeText: string | null; run: RunView | null }): ProbeTarget {
  let recipePython: string | null = null;
  let engine: string | null = null;
  if (o.recipeText !== null) {
    recipePython = topLevel(o.recipeText, 'python');
    engine = topLevel(o.recipeText, 'engine');
  } else if (o.run?.live && o.run.record.recipeSpec) {
    recipePython = o.run.record.recipeSpec.python;
    engine = o.run.record.recipeSpec.engine;
  }
  return { interpreter: o.python ?? recipePython ?? 'python3', engine: engine === 'mocker' ? 'mocker' : 'vllm' };
}
