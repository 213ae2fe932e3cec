import type { CheckOutcome } from '../doctor/types.js';
import type { CommandContext } from './context.js';
import { EXIT } from './context.js';
import { UserError } from '../errors.js';
import { refuseConflicts } from './conflicts.js';
import { loadRecipe } from '../host/recipes.js';
import { buildPlan } from '../plan/build.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import { dirname, join } from 'node:path';
import { logPath, newRunId, runDir } from '../run/paths.js';
import { formatNdjson, type UpEvent } from '../run/events.js';
import type { UpRenderer } from '../ui/up-plain.js';
import type { SupervisionOptions, SupervisorResult } from '../run/supervisor.js';
import type { DetachedResult } from '../run/detached.js';
import type { ResolvedPython } from '../host/python.js';
import type { RunView } from '../doctor/types.js';

export interface UpOptions {
  model?: string;
  set?: string[];
  dryRun?: boolean;
  script?: boolean;
  detach?: boolean;
  /** Seconds; 0 = no deadline. */
  readyTimeout?: number;
  /** Seconds between SIGTERM and SIGKILL when stopping. */
  grace?: number;
  /** commander's --no-preflight -> false */
  preflight?: boolean;
  json?: boolean;
  /** A run of its own beside live ones: its own ports, found by this name. */
  name?: string;
  /** `on-failure[:N]`: workers that die after ready are started again (policy/restart-policy.ts). */
  restart?: string;
}

/** What a run name may be: one word a shell and a file name take as it is. */
export const RUN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const PROBE_TIMEOUT_MS = 5000;

/** `dynamo-dev up [RECIPE]`: plan, preflight, start, supervise (CLI.md). */
export default async function up(ctx: CommandContext, recipeRef: string | undefined, opts: UpOptions): Promise<number> {
  refuseConflicts({ ...opts, json: ctx.json }, [
    { a: ['dryRun', '--dry-run'], b: ['script', '--script'], why: '--dry-run prints the plan, --script a bash script; choose one' },
    { a: ['detach', '--detach'], b: ['dryRun', '--dry-run'], why: '--dry-run starts nothing to detach from' },
    { a: ['detach', '--detach'], b: ['script', '--script'], why: '--script starts nothing; the script runs in the foreground' },
    { a: ['script', '--script'], b: ['json', '--json'], why: 'the script is bash, not JSON (--dry-run --json prints the plan as JSON)' },
  ]);
  if (opts.name !== undefined && !RUN_NAME.test(opts.name)) {
    throw new UserError(`--name: ${JSON.stringify(opts.name)} is not a run name: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  const restart = opts.restart !== undefined ? (await import('../run/policy/restart-policy.js')).parseRestartPolicy(opts.restart) : null;
  const sets = [...(opts.set ?? [])];
  if (opts.model !== undefined) sets.push(`model=${JSON.stringify(opts.model)}`);
  let recipe = await loadRecipe(recipeRef ?? 'agg', sets);
  // The first line at once: probing the GPU and reading the model's config can take seconds.
  if (!opts.dryRun && !opts.script && !ctx.json) ctx.stdout.write((await import('../ui/up-report.js')).formatHeader(recipe.name, recipe.model));
  // --python, $DYNAMO_DEV_PYTHON, the recipe's python, or the environment `dynamo-dev setup` made.
  const from = await (await import('../host/python.js')).resolvePython({ given: ctx.python, recipePython: recipe.python, engine: recipe.engine, env: ctx.env, timeoutMs: PROBE_TIMEOUT_MS });
  const python = from.interpreter;
  let runId = newRunId(opts.name ? `${recipe.name}-${opts.name}` : recipe.name);
  // The interpreter runs before the run does (its Dynamo version, preflight's imports): with the
  // run's marker, whatever it leaves behind (a helper it double-forked) is found and stopped as the
  // run's by status and teardown (run-scan.ts), never left alive while teardown says nothing remains.
  const { markerFor, RUN_MARKER } = await import('../run/run-scan.js');
  const probeCtx: CommandContext = opts.dryRun || opts.script ? ctx : { ...ctx, env: { ...ctx.env, [RUN_MARKER]: markerFor(ctx.stateDir, runId) } };
  const planAt = await planner(probeCtx, recipe, from, recipeRef ?? 'agg');
  let plan = planAt(runDir(ctx.stateDir, runId));
  await warnHiddenKvLine(ctx, plan);

  if (opts.dryRun) {
    if (ctx.json) ctx.stdout.write(`${JSON.stringify(plan, null, 2)}\n`);
    else ctx.stdout.write((await import('../ui/plan-text.js')).formatPlanText(plan, ctx.interactive ? ctx.stdout.columns || Infinity : Infinity));
    return EXIT.ok;
  }
  if (opts.script) {
    const { generateScript } = await import('../plan/script.js');
    ctx.stdout.write(generateScript(plan, { readyTimeoutS: opts.readyTimeout ?? 900 }));
    return EXIT.ok;
  }

  // The model first, before the lock, the run's folder and the view: a model that cannot be read
  // is the user's input, said as bad input is (one line, exit 2), with nothing started or recorded.
  const model = opts.preflight !== false ? await requireModel(ctx, recipe) : null;

  // Closing the terminal (SIGHUP) makes every later write fail with EIO, a closed pipe (`| head`)
  // with EPIPE. Unhandled, that error would kill us in the middle of stopping: a worker that ignores
  // SIGTERM would never get its SIGKILL and run.json would never say stopped. Lost output is only
  // lost output; supervision goes on.
  let terminalLost = false;
  let interrupted: string | null = null;
  const ignoreWriteError = (err: NodeJS.ErrnoException) => {
    if (err?.code === 'EIO') terminalLost = true;
  };
  ctx.stdout.on('error', ignoreWriteError);
  ctx.stderr.on('error', ignoreWriteError);

  // Before anything is started: the supervisor finds and stops what it started through /proc.
  (await import('../run/proc.js')).assertProcIsOurs();
  const { acquireUpLock, liveAndRecentViews, createRunDir, removeEmptyRunDir } = await import('../run/state.js');
  const lock = await acquireUpLock(ctx.stateDir, runId, opts.name);
  let renderer: UpRenderer | null = null;
  try {
    // A detached run has no `up` holding the lock any more: its live processes refuse a second up.
    const lives = (await liveAndRecentViews(ctx.stateDir, 1)).filter((v) => v.live);
    if (!opts.name && lives.length > 0) {
      const live = lives[0];
      throw new UserError(
        `another run is live: run ${live.record.id}${live.record.name ? ` (${live.record.name})` : ''} (${live.status}); one up per state directory unless each run has a name`,
        `dynamo-dev up ${recipeRef ?? 'agg'} --name NAME   (a second run beside it, with ports of its own), or dynamo-dev teardown --run ${live.record.name ?? live.record.id}`,
      );
    }
    const same = lives.find((v) => v.record.name === opts.name);
    if (opts.name && same) {
      throw new UserError(`--name: a run named ${opts.name} is live (${same.record.id}, ${same.status}); choose another name`, `dynamo-dev teardown --run ${opts.name}`);
    }
    if (opts.name) {
      const moved = await portsBesideOrRefuse(recipe, plan, lives);
      if (moved.recipe !== recipe) {
        recipe = moved.recipe;
        plan = planAt(runDir(ctx.stateDir, runId), recipe);
      }
      if (!ctx.json) ctx.stdout.write(`${moved.line}\n`);
    }
    // Created exclusively (never through a symlink someone planted at the id); a taken id gets a suffix.
    const made = createRunDir(ctx.stateDir, runId);
    if (made !== runId) {
      runId = made;
      plan = planAt(runDir(ctx.stateDir, runId), recipe);
    }
    lock.describe(runId);
    renderer = await makeRenderer(ctx, plan, runId);
    const emit = (e: UpEvent) => renderer!.onEvent(e);
    emit({ event: 'plan', runId, plan });

    if (opts.preflight !== false) {
      const ok = await preflight(probeCtx, recipe, plan, python, emit, model);
      if (ok !== true) {
        removeEmptyRunDir(ctx.stateDir, runId); // nothing was started: no empty run left behind
        return ok === 'interrupted' ? EXIT.interrupted : EXIT.failed;
      }
    }

    emit({ event: 'run', runId, logsDir: dirname(logPath(ctx.stateDir, runId, plan.processes[0]?.name ?? 'frontend')) });
    const timeoutS = opts.readyTimeout ?? 900;
    const options = {
      plan, recipe, runId, stateDir: ctx.stateDir, env: ctx.env, ...(opts.name ? { name: opts.name } : {}),
      readyTimeoutMs: timeoutS > 0 ? Math.min(timeoutS * 1000, 2 ** 31 - 1) : 2 ** 31 - 1,
      graceMs: Math.round((opts.grace ?? 10) * 1000),
      ...(restart ? { restart } : {}),
      runMarker: markerFor(ctx.stateDir, runId),
      // The probes above carried the marker from this process's start: the run's marked processes may be that old.
      markedSinceTicks: (await import('../run/proc.js')).readStartTicks(process.pid),
    };
    const warn = (w: string) => ctx.stderr.write(`dynamo-dev: ${w}\n`);
    const result = opts.detach ? await superviseDetached(ctx, options, emit, warn) : await superviseHere(options, emit, warn);
    // Interrupted means not done: a script's `up --detach && ./bench.sh` must not benchmark nothing.
    if (result.outcome === 'stopped' && result.beforeReady) {
      interrupted = result.code === 0
        ? 'interrupted before ready: nothing left running'
        : 'interrupted before ready: some processes survived SIGKILL (listed above); see `dynamo-dev status`';
      return result.code === 0 ? EXIT.interrupted : EXIT.failed;
    }
    return result.code;
  } finally {
    await renderer?.close();
    await lock.release();
    if (interrupted) ctx.stderr.write(`dynamo-dev: ${interrupted}\n`);
    if (terminalLost) (await import('../run/terminal.js')).releaseLostTerminal();
  }
}

/** The foreground supervisor: this process is the parent of the run until it stops. */
async function superviseHere(o: SupervisionOptions, emit: (e: UpEvent) => void, warn: (w: string) => void): Promise<SupervisorResult> {
  const { Supervisor } = await import('../run/supervisor.js');
  const sup = new Supervisor({ ...o, detach: false });
  sup.on('event', emit);
  sup.on('warning', warn);
  // Dying of a bug would leave every worker running and holding the GPU: stop them first.
  const lastResort = (err: unknown) => void sup.crash(err);
  process.on('uncaughtException', lastResort);
  process.on('unhandledRejection', lastResort);
  try {
    return await sup.run();
  } finally {
    process.off('uncaughtException', lastResort);
    process.off('unhandledRejection', lastResort);
  }
}

/**
 * `--detach`: the run is supervised by a background process that stays its parent after we exit
 * (src/run/detached.ts). We relay its events until ready; a signal before ready stops the run
 * (a second one: SIGKILL at once). Should it be lost before ready, what it started is stopped here.
 */
async function superviseDetached(ctx: CommandContext, o: SupervisionOptions, emit: (e: UpEvent) => void, warn: (w: string) => void): Promise<DetachedResult> {
  const { launchDetached } = await import('../run/detached.js');
  const handle = launchDetached(o, join(runDir(o.stateDir, o.runId), 'supervisor.log'));
  handle.on('event', emit);
  handle.on('warning', warn);
  let stopping = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopping) handle.escalate(sig);
    else handle.stop(sig);
    stopping = true;
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const sig of signals) process.on(sig, onSignal);
  try {
    const result = await handle.result;
    if (result.outcome === 'lost') {
      warn(`${result.reason}; stopping what it started`);
      const { teardown } = await import('../run/teardown.js');
      const out = await teardown({ stateDir: ctx.stateDir, runId: o.runId, graceMs: o.graceMs, orphans: false });
      emit({ event: 'stopped', runId: o.runId, reason: 'failure', stopped: out.stopped, remaining: out.remaining.map(({ name, pid, cmd, state }) => ({ name, pid, cmd, ...(state ? { state } : {}) })), beforeReady: stopping });
      if (stopping && out.remaining.length === 0) return { outcome: 'stopped', code: 0, signal: 'SIGINT', beforeReady: true };
      return result;
    }
    // Stopped or failed before ready: "nothing left running" includes the supervisor itself.
    if (result.outcome !== 'detached') {
      const quick = new Promise<void>((r) => setTimeout(r, 5000).unref());
      await Promise.race([handle.exited, quick]);
    }
    return result;
  } finally {
    for (const sig of signals) process.off(sig, onSignal);
  }
}

/** The plan for a run dir, with what the machine tells: the GPU's total memory, the model's KV shape when cached. */
async function planner(ctx: CommandContext, recipe: Recipe, from: ResolvedPython, recipeSource: string): Promise<(dir: string, r?: Recipe) => Plan> {
  const python = from.interpreter;
  let gpuTotalMiB: number | null = null;
  let model: { bytesPerToken: number; weightsMiB: number | null } | null = null;
  // Flags and env follow the installed Dynamo; read concurrently with the GPU and model probes.
  const version = import('../host/python.js').then((m) => m.probeDynamoVersion(python, ctx.env, PROBE_TIMEOUT_MS)).catch(() => null);
  if (recipe.engine !== 'mocker') {
    const [gpu, info] = await Promise.all([
      import('../host/nvidia-smi.js').then((m) => m.probeGpu(ctx.env, PROBE_TIMEOUT_MS)).catch(() => null),
      // Not cached just means no KV estimate: the first start downloads it.
      import('../host/model-config.js').then((m) => m.modelKvInfo(recipe.model, ctx.env)),
    ]);
    if (gpu?.ok) gpuTotalMiB = gpu.gpus.find((g) => g.index === recipe.gpu)?.memoryTotalMiB ?? null;
    model = info;
  }
  const dynamoVersion = await version;
  return (dir: string, r: Recipe = recipe) => buildPlan({ recipe: r, runDir: dir, gpuTotalMiB, model, python, pythonFrom: from, source: recipeSource, dynamoVersion });
}

/** `up --name`: the recipe with first ports past those the live runs hold and those in use (host/ports-beside.ts, doctor's choice too). */
async function portsBesideOrRefuse(recipe: Recipe, plan: Plan, lives: readonly RunView[]): Promise<{ recipe: Recipe; line: string }> {
  const c = await (await import('../host/ports-beside.js')).portsBeside(recipe, plan, lives);
  if (!c.ok) throw new UserError(`--name: ${c.message}; ${c.fix}`);
  return c;
}

/** Readiness by the KV line cannot work when VLLM_LOGGING_LEVEL hides INFO: say so before anything starts. */
async function warnHiddenKvLine(ctx: CommandContext, plan: Plan): Promise<void> {
  const { kvLineHiddenBy } = await import('../run/readiness.js');
  const hidden = plan.processes
    .filter((p) => p.ready.logPattern)
    .map((p) => ({ name: p.name, level: kvLineHiddenBy({ ...ctx.env, ...p.env }) }))
    .filter((h): h is { name: string; level: string } => h.level !== null);
  if (hidden.length === 0) return;
  ctx.stderr.write(
    `dynamo-dev: warning: VLLM_LOGGING_LEVEL=${hidden[0].level} hides vLLM's INFO line "GPU KV cache size: N tokens" that ` +
      `${hidden.map((h) => h.name).join(', ')} must log to be ready (and to let the next worker start): up will wait until --ready-timeout; ` +
      `unset VLLM_LOGGING_LEVEL or set it to INFO\n`,
  );
}

/**
 * doctor's model.available on the recipe's model (CLI.md up step 3 runs it first): a fail is a
 * UserError naming the model, what is missing and the fix; a pass or warn is returned for the
 * preflight event.
 */
export async function requireModel(ctx: Pick<CommandContext, 'env'>, recipe: Recipe): Promise<CheckOutcome> {
  const t0 = Date.now();
  const [{ probeModelSource, modelEnv }, check] = await Promise.all([import('../host/model-source.js'), import('../doctor/checks/model.available.js')]);
  const r = check.judgeModelSource(await probeModelSource(recipe.model, modelEnv(ctx.env, recipe)), recipe.engine);
  if (r.status === 'fail') throw new UserError(check.modelFailureLine(r));
  return { id: check.default.id, title: check.default.title, durationMs: Date.now() - t0, ...r };
}

/** The preflight's verdict; 'interrupted' when Ctrl-C, SIGTERM or SIGHUP came first (said by an `interrupted` event). */
async function preflight(ctx: CommandContext, recipe: Recipe, plan: Plan, python: string, emit: (e: UpEvent) => void, model: CheckOutcome | null): Promise<boolean | 'interrupted'> {
  const [{ createFacts }, { runChecks }, { selectChecks, preflightIds }] = await Promise.all([
    import('../host/facts.js'), import('../doctor/runner.js'), import('../doctor/registry.js'),
  ]);
  const facts = createFacts({ env: ctx.env, recipe, plan, stateDir: ctx.stateDir, python, timeoutMs: PROBE_TIMEOUT_MS });
  const checks = selectChecks({ only: preflightIds(plan) });
  const pending = new Set(checks.map((c) => c.title));
  let over = false;
  // Once interrupted, checks that still settle (their probes end with the terminal's SIGINT) say nothing: the spinner is gone.
  const progress = () => over || emit({ event: 'preflight-progress', pending: [...pending], done: checks.length - pending.size, total: checks.length });
  progress();
  // Nothing runs yet that a stop would have to end: an interrupt ends the wait for the checks at
  // once (their probes are our children and end with us), clears the spinner and says what was cut short.
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  let onSignal: (s: NodeJS.Signals) => void = () => {};
  const interrupted = new Promise<NodeJS.Signals>((r) => {
    onSignal = r;
  });
  for (const s of signals) process.on(s, onSignal);
  let outcomes: CheckOutcome[];
  try {
    const first = await Promise.race([runChecks(checks, facts, {
      timeoutMs: PROBE_TIMEOUT_MS,
      // The spinner names what is still running: a cold `import torch` can take half a minute.
      onSettled: (o) => {
        pending.delete(o.title);
        progress();
      },
    }), interrupted]);
    if (typeof first === 'string') {
      over = true;
      emit({ event: 'interrupted', stage: 'preflight', signal: first, pending: [...pending] });
      // The NDJSON stream's events are CLI.md's: there it is a failure that started nothing.
      if (ctx.json) emit({ event: 'failed', reason: `interrupted (${first}) during preflight; nothing was started`, process: null, diagnosis: null, hint: null, lastLines: [], log: null });
      return 'interrupted';
    }
    outcomes = first;
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
  if (model) outcomes = [model, ...outcomes];
  const ok = outcomes.every((o) => o.status !== 'fail');
  emit({
    event: 'preflight', ok,
    checks: outcomes.map(({ id, title, status, summary, details, fix }) => ({ id, title, status, summary, details, fix })),
  });
  if (!ok) {
    const failed = outcomes.filter((o) => o.status === 'fail').map((o) => o.id);
    emit({ event: 'failed', reason: `preflight: ${failed.join(', ')} failed; nothing was started`, process: null, diagnosis: null, hint: null, lastLines: [], log: null });
  }
  return ok;
}

async function makeRenderer(ctx: CommandContext, plan: Plan, runId: string): Promise<UpRenderer> {
  if (ctx.json) {
    return {
      onEvent(e) {
        const line = formatNdjson(e);
        if (line) ctx.stdout.write(line);
      },
      async close() {},
    };
  }
  // A terminal that reports no width (some CI pseudo-TTYs) would wrap every character: plain lines.
  if (ctx.interactive && (ctx.stdout.columns ?? 0) >= 40) {
    const { mountUpView } = await import('../ui/up-view.js');
    return mountUpView(plan, runId, ctx.stdout as NodeJS.WriteStream);
  }
  const { plainRenderer } = await import('../ui/up-plain.js');
  return plainRenderer(ctx.stdout, ctx.stderr);
}
