import { isUserError } from '../errors.js';
import { DEFAULT_GRACE_S } from '../defaults.js';
import type { AiperfProgram } from '../host/python/aiperf.js';
import { runBench, startedFrom, type BenchDoc, type BenchEvent, type BenchPlan, type PreparedVariant, type Started } from './bench.js';
import { onStopSignals } from './signals.js';
import { teardown } from './teardown.js';
import type { UpEvent } from './events.js';

// Each variant of `bench` starts as `up --detach` starts a run: the same plan (plan-run.ts), the
// same model check and the same startRun (start-run.ts), its events read as they come; and the
// variants run one after another under the stop signals (runVariants).

export interface VariantStartOptions {
  stateDir: string;
  env: NodeJS.ProcessEnv;
  /** --python (else the recipe's, else the environment `dynamo-dev setup` made). */
  python: string | undefined;
  /** --release: the environment `dynamo-dev setup` made for that release. */
  release?: string;
  /** Recorded as up would say it in refusals (`up RECIPE --set ...`): the bench's own --set. */
  sets: string[];
  model?: string;
  readyTimeoutS?: number;
  preflight: boolean;
  /** What up would say on stderr (a warning before the start, an interrupt before ready). */
  warn(text: string): void;
}

export async function startVariant(v: PreparedVariant, o: VariantStartOptions): Promise<Started> {
  const events: UpEvent[] = [];
  let code: number;
  try {
    code = await start(v, o, events);
  } catch (err) {
    // Bad input is up's exit 2, anything else its exit 1; the reason is the variant's.
    code = isUserError(err) ? 2 : 1;
    events.push({ event: 'failed', reason: (err as Error).message, process: null, diagnosis: null, hint: null, lastLines: [], log: null });
  }
  return startedFrom(events, code);
}

async function start(v: PreparedVariant, o: VariantStartOptions, events: UpEvent[]): Promise<number> {
  const [{ resolvePython }, { planRun, hiddenKvLineWarning }, { requireModel, PROBE_TIMEOUT_MS }, { startRun }] = await Promise.all([
    import('../host/python/python.js'), import('./plan-run.js'), import('./preflight.js'), import('./start-run.js'),
  ]);
  const recipe = v.recipeObj;
  const from = await resolvePython({ given: o.python, release: o.release, recipePython: recipe.python, engine: recipe.engine, device: recipe.device, env: o.env, timeoutMs: PROBE_TIMEOUT_MS });
  const planned = await planRun({ recipe, source: v.recipe, python: from, env: o.env, stateDir: o.stateDir });
  const hidden = hiddenKvLineWarning(o.env, planned.plan);
  if (hidden) o.warn(hidden);
  const model = o.preflight ? await requireModel(o, recipe) : null;
  const started = await startRun(planned, {
    stateDir: o.stateDir, env: o.env, recipe, recipeRef: v.recipe, python: from.interpreter,
    detach: true, readyTimeoutS: o.readyTimeoutS, preflight: o.preflight, model, json: true,
    onEvent: (e) => {
      if (e.event === 'warning') o.warn(e.text);
      else if (e.event !== 'ports-beside') events.push(e);
    },
  });
  if (started.interrupted) o.warn(started.interrupted);
  return started.code;
}

export interface RunVariantsOptions {
  env: NodeJS.ProcessEnv;
  stateDir: string;
  python: (v: PreparedVariant) => string;
  aiperf: AiperfProgram;
  onEvent(e: BenchEvent): void;
  /** The first stop signal came (before the variant's stop is said). */
  onInterrupt(): void;
  /** How each variant starts (startVariant), less what this call knows. */
  start: Omit<VariantStartOptions, 'stateDir' | 'env'>;
}

/**
 * Every variant (bench.ts runBench) under the stop signals: Ctrl-C, SIGTERM, SIGHUP stop the
 * current variant cleanly (a start's own handlers stop it; AIPerf is stopped by runBench; teardown
 * follows), the rest stay missing.
 */
export async function runVariants(b: BenchPlan, o: RunVariantsOptions): Promise<BenchDoc> {
  const listeners: (() => void)[] = [];
  const interrupted = { yes: false, on: (f: () => void) => (interrupted.yes ? f() : listeners.push(f)) };
  const off = onStopSignals(() => {
    if (interrupted.yes) return;
    interrupted.yes = true;
    o.onInterrupt();
    for (const f of listeners.splice(0)) f();
  });
  try {
    return await runBench(b, {
      env: o.env, stateDir: o.stateDir, python: o.python, aiperf: o.aiperf, interrupted, onEvent: o.onEvent,
      start: (v) => startVariant(v, { ...o.start, stateDir: o.stateDir, env: o.env }),
      teardown: async (runId) => {
        const out = await teardown({ stateDir: o.stateDir, runId, graceMs: DEFAULT_GRACE_S * 1000, orphans: false });
        return { remaining: out.remaining.length };
      },
    });
  } finally {
    off();
  }
}
