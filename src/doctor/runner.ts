import type { Check, CheckOutcome, CheckResult, Facts } from './types.js';

export interface RunOptions {
  timeoutMs: number;
  /** Called as each check settles (spinners), with its index in the declared order. */
  onSettled?: (outcome: CheckOutcome, index: number) => void;
}

class CheckTimeout extends Error {}

/** What each fact getter waits on, for a timeout summary a user can act on. */
const PROBE_NAMES: Record<string, string> = {
  gpu: 'nvidia-smi',
  computeApps: 'nvidia-smi --query-compute-apps',
  processes: 'the process list (ps)',
  python: 'the Python interpreter',
  compat: 'ldconfig -p',
  hfModel: 'the Hugging Face cache',
  modelSource: 'the model folder or the Hugging Face hub',
  ucx: 'ucx_info',
  nixl: 'the NIXL transfer probe',
  nixlWithoutTls: 'the NIXL transfer probe without UCX_TLS',
  ports: 'the port probe',
  run: 'the run state',
  logs: 'reading the logs',
  frontend: "the frontend's /health and /v1/models",
};

/**
 * The facts as one check sees them, remembering which of its probes have not answered yet, so a
 * timeout can say "waiting for nvidia-smi" rather than leave the user to guess.
 */
function tracked(facts: Facts): { facts: Facts; waiting: () => string[] } {
  const pending = new Set<string>();
  const proxy = new Proxy(facts, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]) => {
        const out = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (out instanceof Promise) {
          pending.add(prop);
          out.then(() => pending.delete(prop), () => pending.delete(prop));
        }
        return out;
      };
    },
  });
  return { facts: proxy, waiting: () => [...pending].map((k) => PROBE_NAMES[k] ?? k) };
}

/** Runs one check with a deadline; a throw or a timeout becomes a fail carrying the reason. */
async function runOne(check: Check, allFacts: Facts, timeoutMs: number): Promise<CheckOutcome> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let result: CheckResult;
  const { facts, waiting } = tracked(allFacts);
  try {
    result = await Promise.race([
      check.run(facts),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CheckTimeout()), timeoutMs);
      }),
    ]);
  } catch (err) {
    const timedOut = err instanceof CheckTimeout;
    const slow = timedOut ? waiting() : [];
    result = {
      status: 'fail',
      summary: timedOut
        ? `timed out after ${timeoutMs} ms ${slow.length > 0 ? `waiting for ${slow.join(', ')}` : '(a probe did not answer)'}`
        : `check crashed: ${err instanceof Error ? err.message : String(err)}`,
      details: [],
      fix: timedOut ? `raise the limit with --timeout ${timeoutMs * 2}, or skip it with --skip ${check.id}` : null,
      evidence: timedOut ? { timedOut: true, timeoutMs, waitingFor: slow } : {},
    };
  } finally {
    clearTimeout(timer);
  }
  return { id: check.id, title: check.title, ...result, durationMs: Math.round(performance.now() - t0) };
}

/**
 * Starts every check at once (they share memoized probes through facts) and resolves with the
 * outcomes in declared order, however they finish (flutter doctor's validators).
 */
export async function runChecks(checks: Check[], facts: Facts, opts: RunOptions): Promise<CheckOutcome[]> {
  return Promise.all(
    checks.map(async (c, i) => {
      const outcome = await runOne(c, facts, Math.max(opts.timeoutMs, c.minTimeoutMs ?? 0));
      opts.onSettled?.(outcome, i);
      return outcome;
    }),
  );
}

export interface Tally {
  pass: number;
  warn: number;
  fail: number;
  skip: number;
}

export function tally(outcomes: CheckOutcome[]): Tally {
  const t: Tally = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const o of outcomes) t[o.status]++;
  return t;
}

/** Exit-code judgement: any fail, or any warn under --strict. */
export function doctorOk(outcomes: CheckOutcome[], strict: boolean): boolean {
  const t = tally(outcomes);
  return t.fail === 0 && (!strict || t.warn === 0);
}
