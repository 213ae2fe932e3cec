import type { CommandContext } from './context.js';
import { EXIT } from './context.js';
import { UserError } from '../errors.js';
import { refuseConflicts } from './conflicts.js';
import { loadRecipe } from '../host/files/recipes.js';
import type { Plan } from '../plan/types.js';
import { formatNdjson, type UpEvent } from '../run/events.js';
import type { StartEvent } from '../run/start-run.js';
import type { UpRenderer } from '../ui/up-plain.js';
import { DEFAULT_READY_TIMEOUT_S } from '../defaults.js';

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
  /** gpu|cpu: the recipe's device (--set device=...). */
  device?: string;
}

/** What a run name may be: one word a shell and a file name take as it is. */
export const RUN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `dynamo-dev up [RECIPE]`: plan, then run/start-run.ts's startRun, its events rendered (CLI.md). */
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
  const sets = [...(opts.set ?? []), ...(await import('./device-option.js')).deviceSets(opts.device)];
  if (opts.model !== undefined) sets.push(`model=${JSON.stringify(opts.model)}`);
  const recipe = await loadRecipe(recipeRef ?? 'agg', sets);
  const startsNothing = Boolean(opts.dryRun || opts.script);
  // --python, $DYNAMO_DEV_PYTHON, --release, the recipe's python, or the environment `dynamo-dev setup` made.
  const [{ resolvePython }, { planRun, hiddenKvLineWarning }, { requireModel, PROBE_TIMEOUT_MS }, { formatHeader }] = await Promise.all([
    import('../host/python/python.js'), import('../run/plan-run.js'), import('../run/preflight.js'), import('../ui/up-report.js'),
  ]);
  const from = await resolvePython({ given: ctx.python, release: ctx.release, recipePython: recipe.python, engine: recipe.engine, device: recipe.device, env: ctx.env, timeoutMs: PROBE_TIMEOUT_MS });
  // The first line as soon as the Dynamo version is read (a venv's dist-info: milliseconds), while
  // the GPU and model probes, which can take seconds, go on.
  const header = (version: string | null) => {
    if (!startsNothing && !ctx.json) ctx.stdout.write(formatHeader(recipe.name, recipe.model, { version, python: from.interpreter }));
  };
  const planned = await planRun({
    recipe, source: recipeRef ?? 'agg', python: from, env: ctx.env, stateDir: ctx.stateDir, name: opts.name, dryRun: startsNothing, onDynamoVersion: header,
  });
  const hidden = hiddenKvLineWarning(ctx.env, planned.plan);
  if (hidden) ctx.stderr.write(`dynamo-dev: ${hidden}\n`);

  if (opts.dryRun) {
    if (ctx.json) ctx.stdout.write(`${JSON.stringify(planned.plan, null, 2)}\n`);
    else ctx.stdout.write((await import('../ui/plan-text.js')).formatPlanText(planned.plan, ctx.interactive ? ctx.stdout.columns || Infinity : Infinity));
    return EXIT.ok;
  }
  if (opts.script) {
    const { generateScript } = await import('../plan/script.js');
    ctx.stdout.write(generateScript(planned.plan, { readyTimeoutS: opts.readyTimeout ?? DEFAULT_READY_TIMEOUT_S }));
    return EXIT.ok;
  }

  // The model first, before the lock, the run's folder and the view: a model that cannot be read
  // is the user's input, said as bad input is (one line, exit 2), with nothing started or recorded.
  const model = opts.preflight !== false ? await requireModel(ctx, recipe) : null;

  const view = upView(ctx, planned.runId);
  try {
    const { startRun } = await import('../run/start-run.js');
    const started = await startRun(planned, {
      stateDir: ctx.stateDir, env: ctx.env, recipe, recipeRef: recipeRef ?? 'agg', python: from.interpreter, name: opts.name,
      detach: Boolean(opts.detach), readyTimeoutS: opts.readyTimeout, graceS: opts.grace, restart,
      preflight: opts.preflight !== false, model, json: ctx.json, onEvent: view.onEvent,
    });
    view.interrupted = started.interrupted;
    return started.code;
  } finally {
    await view.close();
  }
}

/**
 * The start's events on this terminal (the live view or plain lines) or as NDJSON. The view starts
 * with the plan (its run id is the one the run folder took); what the run tells while the view
 * loads waits for it, in order.
 */
function upView(ctx: CommandContext, plannedId: string): { onEvent(e: StartEvent): void; interrupted: string | null; close(): Promise<void> } {
  // Closing the terminal (SIGHUP) makes every later write fail with EIO, a closed pipe (`| head`)
  // with EPIPE. Unhandled, that error would kill us in the middle of stopping: a worker that ignores
  // SIGTERM would never get its SIGKILL and run.json would never say stopped. Lost output is only
  // lost output; supervision goes on.
  let terminalLost = false;
  const ignoreWriteError = (err: NodeJS.ErrnoException) => {
    if (err?.code === 'EIO') terminalLost = true;
  };
  ctx.stdout.on('error', ignoreWriteError);
  ctx.stderr.on('error', ignoreWriteError);
  let view: Promise<UpRenderer> | null = null;
  let renderer: UpRenderer | null = null;
  const held: UpEvent[] = [];
  const self = {
    interrupted: null as string | null,
    onEvent(e: StartEvent) {
      if (e.event === 'ports-beside') {
        if (!ctx.json) ctx.stdout.write(`${e.line}\n`);
        return;
      }
      if (e.event === 'warning') {
        ctx.stderr.write(`dynamo-dev: ${e.text}\n`);
        return;
      }
      if (e.event === 'plan' && !view) {
        view = makeRenderer(ctx, e.plan, e.runId ?? plannedId).then((r) => {
          renderer = r;
          for (const h of held.splice(0)) r.onEvent(h);
          return r;
        });
      }
      if (renderer) renderer.onEvent(e);
      else held.push(e);
    },
    async close() {
      if (view) await (await view).close();
      if (self.interrupted) ctx.stderr.write(`dynamo-dev: ${self.interrupted}\n`);
      if (terminalLost) (await import('../run/terminal.js')).releaseLostTerminal();
    },
  };
  return self;
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
