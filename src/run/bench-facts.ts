import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import type { CheckView, GateFacts } from '../bench/gates/types.js';
import { plannedWorkers } from '../plan/planned-workers.js';
import { kvEventsApplied, type KvEventsApplied } from '../bench/kv-events-metric.js';
import { getText } from '../host/net/http.js';

// The facts a bench variant's gates judge, read from its live run: doctor's own checks of the run
// (kv.allocated, kv.events, frontend.models), the download-lock findings in its logs, and (after the
// load) the processes it lost. Each read is fresh: a fact read before the load says nothing about after.

const GATE_CHECKS = ['kv.allocated', 'kv.events', 'frontend.models'] as const;
const LOCK_CODES = new Set(['hf.lock-wait', 'hf.lock-failed']);

export interface RunFactsInput {
  env: NodeJS.ProcessEnv;
  stateDir: string;
  runId: string;
  recipe: Recipe;
  plan: Plan;
  python: string;
  timeoutMs?: number;
}

export interface RunFacts {
  checks: GateFacts['checks'];
  lockWaits: GateFacts['lockWaits'];
  lost: NonNullable<GateFacts['lost']>;
  /** The frontend's count of KV events its router applied (null: no counter, or no answer). */
  kvEventsApplied: KvEventsApplied | null;
  /** The run is live (a supervisor or a process of it runs). */
  live: boolean;
}

export async function readRunFacts(o: RunFactsInput): Promise<RunFacts> {
  const { createFacts, runChecks, selectChecks } = await import('../doctor/judge.js');
  const timeoutMs = o.timeoutMs ?? 5000;
  const facts = createFacts({ env: o.env, recipe: o.recipe, plan: o.plan, stateDir: o.stateDir, runId: o.runId, python: o.python, timeoutMs });
  const outcomes = await runChecks(selectChecks({ only: [...GATE_CHECKS] }), facts, { timeoutMs });
  const checks: GateFacts['checks'] = {};
  for (const c of outcomes) {
    const view: CheckView = { status: c.status, summary: c.summary, evidence: c.evidence };
    checks[c.id as (typeof GATE_CHECKS)[number]] = view;
  }
  const fe = o.plan.processes.find((p) => p.role === 'frontend');
  const [logs, run, metrics] = await Promise.all([
    facts.logs(), facts.run(),
    fe?.ports.http ? getText(`http://127.0.0.1:${fe.ports.http}/metrics`, timeoutMs) : Promise.resolve(null),
  ]);
  const label = new Map((logs?.files ?? []).map((f) => [f.path, f.process ?? f.path]));
  const lockWaits = (logs?.scan.findings ?? []).filter((f) => LOCK_CODES.has(f.code))
    .map((f) => ({ code: f.code, count: f.count, file: label.get(f.file) ?? f.file, line: f.line, text: f.text }));
  // The real worker waits silently: the supervisor records the wait it saw from the held lock.
  for (const p of run?.record.processes ?? []) {
    if (!p.lockWait) continue;
    const who = p.lockWait.holderPid !== null ? ` held by pid ${p.lockWait.holderPid}${p.lockWait.holderCmd ? ` (${p.lockWait.holderCmd})` : ''}` : '';
    lockWaits.push({ code: 'hf.lock-wait', count: 1, file: p.name, line: 0, text: `${p.name} waited on ${p.lockWait.lockPath}${who}` });
  }
  const { describeEnd } = await import('./losses.js');
  const lost = (run?.lost ?? []).map((l) => ({ name: l.name, how: describeEnd(l), at: l.at ?? null }));
  return { checks, lockWaits, lost, kvEventsApplied: metrics === null ? null : kvEventsApplied(metrics), live: run?.live === true };
}

/** The planned worker process names and the count the frontend should see. */
export function plannedWorkerNames(plan: Plan): { names: string[]; count: number | null } {
  return { names: plan.processes.filter((p) => p.role !== 'frontend').map((p) => p.name), count: plannedWorkers({ processes: [], plan }) };
}
