import type { CheckOutcome } from '../doctor/judge.js';
import { UserError } from '../errors.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import type { UpEvent } from './events.js';
import { onStopSignals } from './signals.js';

// up's preflight (CLI.md up step 3): doctor's checks for the plan, before anything starts. The
// checks come in by dynamic import, as bench's gates do (bench-facts.ts): doctor judges runs too.

/** How long one probe of the machine may take. */
export const PROBE_TIMEOUT_MS = 5000;

/**
 * doctor's model.available on the recipe's model (CLI.md up step 3 runs it first): a fail is a
 * UserError naming the model, what is missing and the fix; a pass or warn is returned for the
 * preflight event.
 */
export async function requireModel(ctx: { env: NodeJS.ProcessEnv }, recipe: Recipe): Promise<CheckOutcome> {
  const t0 = Date.now();
  // The one check alone (not doctor/judge.js, which loads every check): up --dry-run and bench ask it first.
  const [{ probeModelSource, modelEnv }, check] = await Promise.all([import('../host/hf/model-source.js'), import('../doctor/checks/model.available.js')]);
  const r = check.judgeModelSource(await probeModelSource(recipe.model, modelEnv(ctx.env, recipe)), recipe.engine);
  if (r.status === 'fail') throw new UserError(check.modelFailureLine(r));
  return { id: check.default.id, title: check.default.title, durationMs: Date.now() - t0, ...r };
}

export interface PreflightInput {
  env: NodeJS.ProcessEnv;
  stateDir: string;
  recipe: Recipe;
  plan: Plan;
  python: string;
  /** requireModel's outcome, listed first. */
  model: CheckOutcome | null;
  /** The NDJSON stream: an interrupt is also a `failed` event there (CLI.md's events). */
  json: boolean;
}

/**
 * `up --no-preflight` still refuses a port of the plan that something else holds, at once and
 * naming the holder: a taken system port does not stop a real vLLM worker (it logs `Failed to bind
 * to address 0.0.0.0:N` and goes on without /health, test/fixtures/engine/cpu-system-port-taken.log),
 * so the start would wait out its whole deadline minutes later, or judge a stranger's /health. Only
 * ports.free (a bind test and /proc, well under a second); said only when it fails.
 */
export async function portsStillFree(i: PreflightInput, emit: (e: UpEvent) => void): Promise<boolean | 'interrupted'> {
  return preflight(i, emit, { only: ['ports.free'], quiet: true });
}

/** The preflight's verdict; 'interrupted' when Ctrl-C, SIGTERM or SIGHUP came first (said by an `interrupted` event). */
export async function preflight(
  i: PreflightInput, emit: (e: UpEvent) => void, scope: { only?: string[]; quiet?: boolean } = {},
): Promise<boolean | 'interrupted'> {
  const { createFacts, runChecks, selectChecks, preflightIds } = await import('../doctor/judge.js');
  const facts = createFacts({ env: i.env, recipe: i.recipe, plan: i.plan, stateDir: i.stateDir, python: i.python, timeoutMs: PROBE_TIMEOUT_MS });
  const checks = selectChecks({ only: scope.only ?? preflightIds(i.plan) });
  const pending = new Set(checks.map((c) => c.title));
  let over = false;
  // Once interrupted, checks that still settle (their probes end with the terminal's SIGINT) say nothing: the spinner is gone.
  const progress = () => over || scope.quiet || emit({ event: 'preflight-progress', pending: [...pending], done: checks.length - pending.size, total: checks.length });
  progress();
  // Nothing runs yet that a stop would have to end: an interrupt ends the wait for the checks at
  // once (their probes are our children and end with us), clears the spinner and says what was cut short.
  let onSignal: (s: NodeJS.Signals) => void = () => {};
  const interrupted = new Promise<NodeJS.Signals>((r) => {
    onSignal = r;
  });
  const off = onStopSignals(onSignal);
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
      if (i.json) emit({ event: 'failed', reason: `interrupted (${first}) during preflight; nothing was started`, process: null, diagnosis: null, hint: null, lastLines: [], log: null });
      return 'interrupted';
    }
    outcomes = first;
  } finally {
    off();
  }
  if (i.model && !scope.quiet) outcomes = [i.model, ...outcomes];
  const ok = outcomes.every((x) => x.status !== 'fail');
  if (ok && scope.quiet) return true;
  emit({
    event: 'preflight', ok,
    checks: outcomes.map(({ id, title, status, summary, details, fix }) => ({ id, title, status, summary, details, fix })),
    // --no-preflight: only the ports were asked (portsStillFree).
    ...(scope.quiet ? { portsOnly: true as const } : {}),
  });
  if (!ok) {
    const failed = outcomes.filter((x) => x.status === 'fail').map((x) => x.id);
    const skipped = scope.quiet ? ' (--no-preflight skips doctor\'s checks, never the ports of the plan)' : '';
    emit({ event: 'failed', reason: `preflight: ${failed.join(', ')} failed${skipped}; nothing was started`, process: null, diagnosis: null, hint: null, lastLines: [], log: null });
  }
  return ok;
}
