import type { CommandContext } from './context.js';
import { EXIT } from './context.js';
import { UserError, isUserError } from '../errors.js';
import type { Engine, LoadShape } from '../bench/presets.js';
import { DEFAULT_GRACE_S } from '../defaults.js';
import type { BenchDoc, BenchEvent, PreparedVariant } from '../run/bench.js';

export interface BenchOptions {
  preset?: string;
  vary?: string[];
  concurrency?: string[];
  requests?: number;
  repeats?: number;
  seed?: number;
  model?: string;
  /** --set PATH=VALUE for every variant (before the variant's own overrides). */
  set?: string[];
  /** commander's --no-preflight -> false */
  preflight?: boolean;
  readyTimeout?: number;
  plot?: string;
  json?: boolean;
}

/**
 * `dynamo-dev bench RECIPE... | --preset NAME` (CLI.md, issue 23): every variant through preflight,
 * up (detached, real readiness), the gates, AIPerf, teardown. Everything the user gave is checked
 * before anything starts: a bad preset, an unknown --vary key, no AIPerf are exit 2.
 */
export default async function bench(ctx: CommandContext, recipes: string[], opts: BenchOptions): Promise<number> {
  // A --plot the end could not write is found now, not after the whole bench ran.
  if (opts.plot) await import('../host/plot-file.js').then((m) => m.checkPlotTarget(opts.plot!));
  const [{ parseVary, parseConcurrency, expandVariants, presetVariants, findPreset }, presets] = await Promise.all([
    import('../bench/variants.js'), import('../bench/presets.js'),
  ]);
  if (recipes.length > 0 && opts.preset) throw new UserError('give recipes or --preset, not both (a preset names its own recipes)');
  if (recipes.length === 0 && !opts.preset) {
    throw new UserError(`bench needs a recipe or --preset (${presets.PRESET_NAMES.join(', ')})`, 'dynamo-dev bench --preset routing   (or: dynamo-dev bench agg --vary frontend.routerMode=kv,round-robin)');
  }
  const preset = opts.preset ? findPreset(opts.preset) : null;
  const varies = (opts.vary ?? []).map(parseVary);
  const concurrency = opts.concurrency?.length ? parseConcurrency(opts.concurrency) : preset?.concurrency ?? presets.DEFAULT_CONCURRENCY;
  const requests = opts.requests ?? preset?.requests ?? presets.DEFAULT_REQUESTS;
  const repeats = opts.repeats ?? presets.DEFAULT_REPEATS;
  const seed = opts.seed ?? 0;
  const load: LoadShape = preset?.load ?? presets.DEFAULT_LOAD;

  // The engine a preset runs on: vLLM with a GPU, else Dynamo's mocker (CPU only).
  let engine: Engine = 'vllm';
  const gpu = await import('../host/nvidia-smi.js').then((m) => m.probeGpu(ctx.env, 5000)).catch(() => null);
  if (preset && !(gpu?.ok && gpu.gpus.length > 0)) engine = 'mocker';
  const specs = preset ? presetVariants(preset, engine, varies) : expandVariants(recipes, varies);

  // Every variant's recipe loads (an unknown --vary key fails here, naming it) before anything starts.
  const [{ loadRecipe }, { modelSource }] = await Promise.all([import('../host/recipes.js'), import('../plan/embedded-model.js')]);
  const variants: PreparedVariant[] = [];
  for (const v of specs) {
    const sets = [...(opts.set ?? []), ...Object.entries(v.sets).map(([k, val]) => `${k}=${val}`)];
    if (opts.model !== undefined) sets.push(`model=${JSON.stringify(opts.model)}`);
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
  const { resolvePython } = await import('../host/python.js');
  const chosen = new Map<string, string>();
  for (const v of variants) {
    const key = `${v.recipeObj.engine}\0${v.recipeObj.python}`;
    if (!chosen.has(key)) chosen.set(key, (await resolvePython({ given: ctx.python, recipePython: v.recipeObj.python, engine: v.recipeObj.engine, env: ctx.env })).interpreter);
  }
  const python = (v: PreparedVariant) => chosen.get(`${v.recipeObj.engine}\0${v.recipeObj.python}`)!;

  // Every variant's model can be read (up's first preflight check), before the first variant starts.
  if (opts.preflight !== false) {
    const { requireModel } = await import('../run/preflight.js');
    const seen = new Set<string>();
    for (const v of variants) {
      const key = JSON.stringify([v.recipeObj.model, v.recipeObj.engine, v.recipeObj.workers[0]?.env ?? {}]);
      if (seen.has(key)) continue;
      seen.add(key);
      await requireModel(ctx, v.recipeObj);
    }
  }

  const { findAiperf, aiperfFix } = await import('../host/aiperf.js');
  const aiperf = await findAiperf(ctx.env, python(variants[0]));
  if (!aiperf) throw new UserError(`AIPerf is not installed: no \`aiperf\` on PATH, no AIPerf environment from setup, and \`${python(variants[0])} -m aiperf\` has none; bench measures with it`, aiperfFix('dynamo-dev'));

  // One up at a time per state directory: a live run would make the first variant's up refuse.
  const { findRunView } = await import('../run/state.js');
  const live = await findRunView(ctx.stateDir);
  if (live?.live) throw new UserError(`another run is live: run ${live.record.id} (${live.status}); bench starts its own runs`, `dynamo-dev teardown --run ${live.record.id}`);

  const store = await import('../run/bench-store.js');
  const id = store.newBenchId(preset?.name ?? recipes.join('+'));
  const { probeDynamoVersion, probeVllmVersion, probePythonVersion } = await import('../host/python.js');
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
      dynamo: await probeDynamoVersion(python(variants[0]), ctx.env, 10_000),
      vllm: engines.includes('vllm') ? await probeVllmVersion(python(variants.find((v) => v.recipeObj.engine === 'vllm')!), ctx.env, 10_000) : null,
      aiperf: aiperf.version,
      aiperfFound: aiperf.found,
      python: python(variants[0]),
      pythonVersion: await probePythonVersion(python(variants[0]), ctx.env, 10_000),
      engine: ranEngine,
    },
    load, variants: [],
  };

  // Ctrl-C, SIGTERM, SIGHUP: the current variant stops cleanly (up's own handlers stop a start;
  // AIPerf is stopped here; teardown follows), the rest stay missing, exit 130.
  const listeners: (() => void)[] = [];
  const interrupted = { yes: false, on: (f: () => void) => (interrupted.yes ? f() : listeners.push(f)) };
  const onSignal = () => {
    if (interrupted.yes) return;
    interrupted.yes = true;
    // The terminal echoed ^C with no newline: what follows starts on a line of its own.
    if (ctx.interactive) ctx.stdout.write('\n');
    for (const f of listeners.splice(0)) f();
  };
  const offSignals = (await import('../run/signals.js')).onStopSignals(onSignal);

  const { wrapWords } = await import('../ui/fit.js');
  const width = ctx.interactive ? ctx.stdout.columns ?? 80 : null;
  // Progress: on stdout (stderr with --json); on a terminal each line wrapped at words, continuations under the text.
  const say = (text: string) => {
    const lines = text.split('\n').flatMap((l) => (width === null ? [l] : wrapWords(l, width, `${/^ */.exec(l)![0]}    `)));
    (ctx.json ? ctx.stderr : ctx.stdout).write(`${lines.join('\n')}\n`);
  };
  // Notes on stderr, fitted as the progress is (a terminal shows both).
  const note = (text: string) => ctx.stderr.write(`${(width === null ? [text] : wrapWords(text, width, '  ')).join('\n')}\n`);
  say(`bench ${id}: ${variants.length} variant${variants.length === 1 ? '' : 's'}${preset ? ` (preset ${preset.name}, ${engine === 'mocker' ? 'mocker engine: no GPU' : 'vLLM'})` : ''}, concurrency ${concurrency.join(',')}, ${repeats} repeat${repeats === 1 ? '' : 's'} of ${requests} requests; AIPerf ${aiperf.version ?? '(version unknown)'}`);

  // The time it will take: said before anything starts, then (on a terminal) the time left on the progress lines.
  const est = await import('../bench/estimate.js');
  let progress = est.benchProgress(ranEngine, variants, concurrency, repeats, requests);
  const byName = new Map(variants.map((v, i) => [v.name, i]));
  say(`estimate: about ${est.formatLeft(est.remainingMs(progress))} (${progress.steps.filter((x) => x.kind === 'load').length} load runs of ${requests} requests; from typical ${ranEngine === 'mocker' ? 'mocker' : 'vLLM'} times, refined as it runs)`);
  let variantStart = Date.now();
  const track = (e: BenchEvent): string => {
    const i = byName.get(e.name) ?? -1;
    if (e.event === 'variant') variantStart = Date.now();
    else if (e.event === 'up') {
      progress = est.stepDone(progress, { kind: 'up', variant: i }, Date.now() - variantStart);
      if (e.code !== 0) progress = est.variantEnded(progress, i, false);
    } else if (e.event === 'gates' && e.gates.some((g) => g.status === 'fail')) progress = est.variantEnded(progress, i, true);
    else if (e.event === 'load') {
      progress = est.stepDone(progress, { kind: 'load', variant: i, concurrency: e.concurrency, requests }, e.ms);
      if (!e.metrics) progress = est.variantEnded(progress, i, true);
    } else if (e.event === 'teardown') progress = est.stepDone(progress, { kind: 'teardown', variant: i }, e.ms);
    else if (e.event === 'done') progress = est.variantEnded(progress, i, false);
    const line = progressLine(e);
    // Piped: plain lines (a log reads the same every time); a terminal gets the time left.
    if (!ctx.interactive || ctx.json || !['variant', 'up', 'load'].includes(e.event)) return line;
    const left = est.remainingMs(progress);
    return `${line} · ${left > 0 ? `about ${est.formatLeft(left)} left` : 'finishing'}`;
  };

  const { runBench } = await import('../run/bench.js');
  const { startVariant } = await import('../run/bench-start.js');
  const { teardown } = await import('../run/teardown.js');
  let result: BenchDoc;
  try {
    result = await runBench({ doc, variants }, {
      env: ctx.env, stateDir: ctx.stateDir, python, aiperf,
      interrupted,
      onEvent: (e) => say(track(e)),
      start: (v) => startVariant(v, {
        stateDir: ctx.stateDir, env: ctx.env, python: ctx.python, sets: opts.set ?? [], model: opts.model,
        readyTimeoutS: opts.readyTimeout, preflight: opts.preflight !== false,
        warn: (text) => ctx.stderr.write(`dynamo-dev: ${text}\n`),
      }),
      teardown: async (runId) => {
        const out = await teardown({ stateDir: ctx.stateDir, runId, graceMs: DEFAULT_GRACE_S * 1000, orphans: false });
        return { remaining: out.remaining.length };
      },
    });
  } finally {
    offSignals();
  }

  // The report is the stored document rendered as `bench show ID` renders it: read back, so what
  // is printed now is what `bench show` prints later, byte for byte.
  const [{ renderResult }, { terminalOf }] = await Promise.all([import('../bench/render.js'), import('./bench-stored.js')]);
  const stored = await store.readBenchResult(ctx.stateDir, result.id);
  const rendered = renderResult(stored, await terminalOf(ctx));
  if (ctx.json) ctx.stdout.write(`${JSON.stringify(stored, null, 2)}\n`);
  else ctx.stdout.write(`\n${rendered.text}${rendered.text.endsWith('\n') ? '' : '\n'}`);
  note(`result: ${store.benchResultPath(ctx.stateDir, id)} (again: \`dynamo-dev bench show ${id}\`)`);
  let plotFailed = false;
  if (opts.plot) {
    // The picture of what was measured, also after an interrupt; a write that fails now is said, the report stands.
    try {
      const { writePlotFile } = await import('../host/plot-file.js');
      await writePlotFile(opts.plot, rendered.svg());
      note(`plot: ${opts.plot}`);
    } catch (err) {
      note(`dynamo-dev: ${(err as Error).message}`);
      plotFailed = true;
    }
  }
  if (result.interrupted) {
    // Said only as observed: a run of this state directory still live after the interrupt is named.
    const left = await findRunView(ctx.stateDir);
    note(left?.live
      ? `dynamo-dev: bench interrupted: run ${left.record.id} is still ${left.status} (\`dynamo-dev teardown --run ${left.record.id}\`); what was measured is kept`
      : 'dynamo-dev: bench interrupted: nothing left running; what was measured is kept');
    return EXIT.interrupted;
  }
  // A control invalid as expected is the preset working; every other invalid or failed variant fails the bench.
  const { variantFails } = await import('../bench/controls.js');
  if (stored.variants.some(variantFails) || plotFailed) return EXIT.failed;
  return EXIT.ok;
}

const fmt = (n: number, d = 1) => n.toFixed(d);

function progressLine(e: BenchEvent): string {
  switch (e.event) {
    case 'variant': return `[${e.index + 1}/${e.total}] ${e.name}`;
    case 'up': return e.code === 0 ? `  ${e.name}: ready (run ${e.runId})` : `  ${e.name}: up failed (exit ${e.code})${e.reason ? `: ${e.reason}` : ''}`;
    case 'gates': {
      const failed = e.gates.filter((g) => g.status === 'fail');
      if (failed.length === 0) {
        // processes.alive judges the load: before it, it is waiting, not unknown.
        const later = e.phase === 'ready' ? e.gates.filter((g) => g.id === 'processes.alive' && g.status === 'unknown') : [];
        const unknown = e.gates.filter((g) => g.status === 'unknown' && !later.includes(g));
        const parts = [`${e.gates.filter((g) => g.status === 'pass').length} pass`, ...unknown.map((g) => `${g.id} unknown (${g.summary})`), ...later.map((g) => `${g.id} after the load`)];
        return `  ${e.name}: gates ${e.phase === 'ready' ? 'at ready' : 'after the load'}: ${parts.join(', ')}`;
      }
      return failed.map((g) => `  ${e.name}: gate ${g.id} FAILED: ${g.summary}`).join('\n');
    }
    case 'load': {
      const at = `concurrency ${e.concurrency}, repeat ${e.repeat + 1}`;
      if (!e.metrics) return `  ${e.name}: ${at}: ${e.error}`;
      const m = e.metrics;
      return `  ${e.name}: ${at}: TTFT mean ${fmt(m.ttftMeanMs)} ms, p50 ${fmt(m.ttftP50Ms)} ms, ITL p50 ${fmt(m.itlP50Ms)} ms, ${fmt(m.outputTokensPerSec)} tok/s, ${fmt(m.requestsPerSec, 2)} req/s, cache hits ${m.cacheHitShare === null ? 'unknown' : `${fmt(m.cacheHitShare * 100)}%`}${m.errors ? `, ${m.errors} failed request${m.errors === 1 ? '' : 's'} of ${m.errors + m.requests}` : ''}`;
    }
    case 'teardown': return `  ${e.name}: stopped run ${e.runId} in ${fmt(e.ms / 1000)} s${e.remaining ? `; ${e.remaining} process(es) remain: see \`dynamo-dev status\`` : ''}`;
    case 'done': return `  ${e.name}: ${e.status.toUpperCase()}${e.reason ? `: ${e.reason}` : ''}`;
  }
}

/** The words after `bench` (the report prints them after `dynamo-dev bench`); global flags before it are the CLI's. */
export function benchArgv(args: string[]): string[] {
  const i = args.indexOf('bench');
  return i >= 0 ? args.slice(i + 1) : args;
}
