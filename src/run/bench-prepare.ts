import { UserError, isUserError } from '../errors.js';
import type { Engine, LoadShape } from '../bench/presets.js';
import type { AiperfProgram } from '../host/python/aiperf.js';
import type { BenchDoc, PreparedVariant } from './bench.js';

// Everything `bench` checks and learns before the first variant starts (issue 23): the variants
// (a preset's, by the machine, or the recipes with --vary), each recipe loaded, each variant's
// interpreter as up chooses it, each model readable, AIPerf found, no live run in the way, and the
// document's head (the machine: GPU, driver, Dynamo, vLLM, AIPerf). Bad input is exit 2 here, with
// nothing started.

export interface BenchInput {
  env: NodeJS.ProcessEnv;
  /** --python (else each recipe's, else the environment `dynamo-dev setup` made). */
  python: string | undefined;
  /** --release: the environment `dynamo-dev setup` made for that release. */
  release?: string;
  stateDir: string;
  recipes: string[];
  preset?: string;
  /** --variants: only these of the preset's variants (its order kept). */
  variants?: string[];
  vary?: string[];
  concurrency?: string[];
  requests?: number;
  repeats?: number;
  seed?: number;
  model?: string;
  /** --set PATH=VALUE for every variant (before the variant's own overrides). */
  set?: string[];
  /** false: --no-preflight. */
  preflight?: boolean;
  /** --device: `cpu` runs a preset's vLLM recipes on vLLM's CPU build (not the mocker) without a GPU. */
  device?: string;
  /** --plot FILE: its variant limit is checked with the others. */
  plot?: string;
}

export interface PreparedBench {
  doc: BenchDoc;
  variants: PreparedVariant[];
  /** The interpreter of a variant. */
  python: (v: PreparedVariant) => string;
  aiperf: AiperfProgram;
  /** The first line bench says. */
  header: string;
  /** The engine the variants ran ('mixed': recipes of both). */
  ranEngine: Engine | 'mixed';
}

export async function prepareBench(i: BenchInput): Promise<PreparedBench> {
  const recipes = i.recipes;
  const [{ parseVary, parseConcurrency, expandVariants, presetVariants, findPreset, pickVariants, refuseComparedSets, variantSetArgs }, presets] = await Promise.all([
    import('../bench/variants.js'), import('../bench/presets.js'),
  ]);
  if (recipes.length > 0 && i.preset) throw new UserError('give recipes or --preset, not both (a preset names its own recipes)');
  if (recipes.length === 0 && !i.preset) {
    throw new UserError(`bench needs a recipe or --preset (${presets.PRESET_NAMES.join(', ')})`, 'dynamo-dev bench --preset routing   (or: dynamo-dev bench agg --vary frontend.routerMode=kv,round-robin)');
  }
  const preset = i.preset ? findPreset(i.preset) : null;
  const varies = (i.vary ?? []).map(parseVary);
  const concurrency = i.concurrency?.length ? parseConcurrency(i.concurrency) : preset?.concurrency ?? presets.DEFAULT_CONCURRENCY;
  const requests = i.requests ?? preset?.requests ?? presets.DEFAULT_REQUESTS;
  const repeats = i.repeats ?? presets.DEFAULT_REPEATS;
  const seed = i.seed ?? 0;
  const load: LoadShape = presets.loadFor(preset?.load ?? presets.DEFAULT_LOAD, requests);

  // The engine a preset runs on: vLLM with a GPU, else Dynamo's mocker (CPU only).
  let engine: Engine = 'vllm';
  const gpu = await import('../host/gpu/nvidia-smi.js').then((m) => m.probeGpu(i.env, 5000)).catch(() => null);
  if (preset && !(gpu?.ok && gpu.gpus.length > 0) && i.device !== 'cpu') engine = 'mocker';
  if (i.variants?.length && !preset) throw new UserError('--variants picks variants of a --preset; with recipes, name the recipes or use --vary');
  const specs = preset ? pickVariants(presetVariants(preset, engine, varies), preset, i.variants) : expandVariants(recipes, varies);
  refuseComparedSets(specs, i.set ?? []);
  // A --plot of more variants than a picture holds: refused before anything is checked, locked or started.
  (await import('../bench/plot-limit.js')).refuseUnplottable(i.plot, specs.length);

  // Every variant's recipe loads (an unknown --vary key fails here, naming it) before anything starts.
  const [{ loadRecipe }, { modelSource }] = await Promise.all([import('../host/files/recipes.js'), import('../plan/embedded-model.js')]);
  const variants: PreparedVariant[] = [];
  for (const v of specs) {
    const sets = variantSetArgs(v, i.set ?? []);
    if (i.model !== undefined) sets.push(`model=${JSON.stringify(i.model)}`);
    let recipeObj;
    try {
      recipeObj = await loadRecipe(v.recipe, sets);
    } catch (err) {
      // An override from --vary: name the flag and its values, as up names --set.
      if (isUserError(err)) {
        const from = varies.find((x) => x.key in v.sets && err.message.includes(x.key));
        if (from) throw new UserError(`--vary ${from.key}=${from.values.join(',')}: ${err.message.replace(/^--set \S+: /, '')}`, err.fix);
      }
      throw err;
    }
    // AIPerf sizes prompts with the tokenizer: the embedded model's is its folder (the id
    // dynamo-dev/tiny is no Hugging Face repository: AIPerf 0.13.0 failed 'not present in the cache').
    variants.push({ ...v, recipeObj, tokenizer: modelSource(recipeObj.model) });
  }
  // The interpreter of each variant as up will choose it (host/python.ts resolvePython): --python,
  // else the recipe's python when it has Dynamo, else the environment `dynamo-dev setup` made. The
  // machine facts, AIPerf's `python -m aiperf` and the gates' checks ask the same one.
  const { resolvePython } = await import('../host/python/python.js');
  const chosen = new Map<string, string>();
  for (const v of variants) {
    const key = `${v.recipeObj.engine}\0${v.recipeObj.python}`;
    if (!chosen.has(key)) chosen.set(key, (await resolvePython({ given: i.python, release: i.release, recipePython: v.recipeObj.python, engine: v.recipeObj.engine, device: v.recipeObj.device, env: i.env })).interpreter);
  }
  const python = (v: PreparedVariant) => chosen.get(`${v.recipeObj.engine}\0${v.recipeObj.python}`)!;

  // Every variant's model can be read (up's first preflight check), before the first variant starts.
  if (i.preflight !== false) {
    const { requireModel } = await import('./preflight.js');
    const seen = new Set<string>();
    for (const v of variants) {
      const key = JSON.stringify([v.recipeObj.model, v.recipeObj.engine, v.recipeObj.workers[0]?.env ?? {}]);
      if (seen.has(key)) continue;
      seen.add(key);
      await requireModel(i, v.recipeObj);
    }
  }

  const { findAiperf, aiperfFix } = await import('../host/python/aiperf.js');
  const aiperf = await findAiperf(i.env, python(variants[0]));
  if (!aiperf) throw new UserError(`AIPerf is not installed: no \`aiperf\` on PATH, no AIPerf environment from setup, and \`${python(variants[0])} -m aiperf\` has none; bench measures with it`, aiperfFix('dynamo-dev'));

  const store = await import('./bench-store.js');
  const id = store.newBenchId(preset?.name ?? recipes.join('+'));
  // One bench at a time per state directory (held until this process ends), then no live run: a
  // live run would make the first variant's up refuse.
  await (await import('./up-lock.js')).acquireBenchLock(i.stateDir, id);
  const { liveRuns, refuseLiveRuns } = await import('./which-run.js');
  refuseLiveRuns(await liveRuns(i.stateDir), { recipeRef: recipes.join(' '), for: 'bench' });

  const { probeDynamoVersion, probeVllmVersion, probePythonVersion } = await import('../host/python/python.js');
  // The engine the variants ran: a preset's (by the machine), else the recipes' own (a mocker
  // recipe is not a vLLM run); recipes of both engines are 'mixed'.
  const engines = [...new Set(variants.map((v) => v.recipeObj.engine))];
  const ranEngine = preset ? engine : engines.length === 1 ? engines[0] : 'mixed';
  const g = gpu?.ok ? gpu.gpus.find((x) => x.index === variants[0].recipeObj.gpu) ?? gpu.gpus[0] ?? null : null;
  const doc: BenchDoc = {
    schemaVersion: 1, id, startedAt: new Date().toISOString(), endedAt: null, argv: benchArgv(process.argv.slice(2)),
    preset: preset?.name ?? null, seed, requests, concurrency, repeats, interrupted: false, isolation: 'fresh-prefixes',
    machine: {
      gpu: g ? { index: g.index, name: g.name, totalMiB: g.memoryTotalMiB ?? 0 } : null,
      driver: gpu?.ok ? gpu.driverVersion : null,
      cudaDriver: gpu?.ok ? gpu.cudaVersion : null,
      dynamo: await probeDynamoVersion(python(variants[0]), i.env, 10_000),
      vllm: engines.includes('vllm') ? await probeVllmVersion(python(variants.find((v) => v.recipeObj.engine === 'vllm')!), i.env, 10_000) : null,
      aiperf: aiperf.version,
      aiperfFound: aiperf.found,
      python: python(variants[0]),
      pythonVersion: await probePythonVersion(python(variants[0]), i.env, 10_000),
      engine: ranEngine,
    },
    load, variants: [],
  };
  const header = `bench ${id}: ${variants.length} variant${variants.length === 1 ? '' : 's'}${preset ? ` (preset ${preset.name}, ${engine === 'mocker' ? 'mocker engine: no GPU' : 'vLLM'})` : ''}, concurrency ${concurrency.join(',')}, ${repeats} repeat${repeats === 1 ? '' : 's'} of ${requests} requests; AIPerf ${aiperf.version ?? '(version unknown)'}`;
  return { doc, variants, python, aiperf, header, ranEngine };
}

/** The words after `bench` (the report prints them after `dynamo-dev bench`); global flags before it are the CLI's. */
export function benchArgv(args: string[]): string[] {
  const i = args.indexOf('bench');
  return i >= 0 ? args.slice(i + 1) : args;
}
