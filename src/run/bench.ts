import { mkdirSync } from 'node:fs';
import { readBoundedSync } from '../host/files/bounded-read.js';
import { join, relative } from 'node:path';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import type { UpEvent } from './events.js';
import type { VariantSpec } from '../bench/variants.js';
import { kvTransportOf, type KvTransport } from '../bench/kv-transport.js';
import type { LoadShape } from '../bench/presets.js';
import type { GateFacts } from '../bench/gates/types.js';
import { firstFailed, judgeGates, type GateResult } from '../bench/gates/registry.js';
import { aiperfArgs, aiperfEnv } from '../bench/aiperf-argv.js';
import { metricsFromExport, type RunMetrics } from '../host/python/aiperf-export.js';
import { samplesFromRecords, type RequestSamples } from '../host/python/aiperf-records.js';
import { findExport, readRecords, runAiperf, type AiperfProgram, type AiperfRun } from '../host/python/aiperf.js';
import { plannedWorkerNames, readRunFacts } from './bench-facts.js';
import { benchDir, writeBenchResult } from './bench-store.js';
import type { BenchResult, BenchVariant as BenchVariantDoc, VariantStatus } from '../bench/result.js';
import { DEFAULT_FRONTEND_PORT } from '../defaults.js';

/** AIPerf's JSON export of one load run is a few KiB; anything past this is not one. */
const MAX_EXPORT_BYTES = 16 * 1024 * 1024;

// One bench, variant after variant (issue 23): for each, doctor's preflight and the start as
// `up --detach` does them (bench-start.ts: startRun, as up), the gates on the live
// run, AIPerf at each concurrency x repeat, the gates again (a process that died during the load),
// then teardown, and the next. The document is written after every step that changes it, so an
// interrupt (or a crash) keeps what was measured.

// The document is bench/result.ts's one type (its zod schema): built here, validated by the writer;
// a new bench always records its load's shape (results stored before may lack it).
export type BenchDoc = BenchResult & { load: LoadShape };

/** What starting a variant told: up's events (plan, preflight, ready or failed) and its exit code. */
export interface Started {
  code: number;
  runId: string | null;
  plan: Plan | null;
  preflight: { id: string; status: string; summary: string }[];
  failed: string | null;
}

export interface PreparedVariant extends VariantSpec {
  recipeObj: Recipe;
  tokenizer: string;
}

export type BenchEvent =
  | { event: 'variant'; index: number; total: number; name: string }
  | { event: 'up'; name: string; runId: string | null; code: number; reason: string | null }
  | { event: 'gates'; name: string; phase: 'ready' | 'after-load'; gates: GateResult[] }
  | { event: 'load'; name: string; concurrency: number; repeat: number; metrics: RunMetrics | null; error: string | null; ms: number }
  | { event: 'teardown'; name: string; runId: string; remaining: number; ms: number }
  | { event: 'done'; name: string; status: VariantStatus; reason: string | null };

export interface BenchDeps {
  env: NodeJS.ProcessEnv;
  stateDir: string;
  python: (v: PreparedVariant) => string;
  start(v: PreparedVariant): Promise<Started>;
  teardown(runId: string): Promise<{ remaining: number }>;
  aiperf: AiperfProgram;
  onEvent(e: BenchEvent): void;
  /** Fires once on the first interrupt (Ctrl-C, SIGTERM, SIGHUP). */
  interrupted: { readonly yes: boolean; on(f: () => void): void };
  now?: () => Date;
}

export interface BenchPlan {
  doc: BenchDoc;
  variants: PreparedVariant[];
}

/** A bench's folder: bench/<id>/ of the state directory (result.json, exports/). */
const dirOf = (b: BenchPlan, d: BenchDeps) => benchDir(d.stateDir, b.doc.id);

/**
 * Stores the document through the one writer of results (bench-store: validated, whole or not at
 * all), so `bench show` reads exactly what `bench` wrote.
 */
const store = (d: BenchDeps, doc: BenchDoc) => writeBenchResult(d.stateDir, doc);

const empty = (v: PreparedVariant, status: VariantStatus, reason: string | null): BenchVariantDoc => ({
  name: v.name, recipe: v.recipe, sets: v.sets, model: v.recipeObj.model, tokenizer: v.tokenizer,
  plan: {}, doctor: [], status, reason, control: v.control ?? null, gates: [], runs: [], runId: null,
});

/** Runs every variant in order; returns the finished document (also on disk). */
export async function runBench(b: BenchPlan, d: BenchDeps): Promise<BenchDoc> {
  const { doc } = b;
  const now = d.now ?? (() => new Date());
  // Every variant is listed from the start as missing: an interrupt leaves the rest so, with the reason.
  doc.variants = b.variants.map((v) => empty(v, 'missing', v.unmeasurable ?? 'not run: the bench was interrupted before it'));
  await store(d, doc);
  let reference: GateFacts['reference'] = null;
  for (const [i, v] of b.variants.entries()) {
    if (d.interrupted.yes) break;
    d.onEvent({ event: 'variant', index: i, total: b.variants.length, name: v.name });
    if (v.unmeasurable) {
      d.onEvent({ event: 'done', name: v.name, status: 'missing', reason: v.unmeasurable });
      continue;
    }
    const out = await runVariant(v, i, b, d, reference);
    doc.variants[i] = out;
    if (reference === null && out.status !== 'missing') reference = { variant: v.name, model: out.model, tokenizer: out.tokenizer };
    await store(d, doc);
    d.onEvent({ event: 'done', name: v.name, status: out.status, reason: out.reason });
  }
  doc.interrupted = d.interrupted.yes;
  doc.endedAt = now().toISOString();
  await store(d, doc);
  return doc;
}

async function runVariant(v: PreparedVariant, index: number, b: BenchPlan, d: BenchDeps, reference: GateFacts['reference']): Promise<BenchVariantDoc> {
  const t = { upMs: 0, loadMs: 0, teardownMs: 0, gatesMs: 0, totalMs: 0 };
  const t0 = Date.now();
  const r = await runStarted(v, index, b, d, reference, t);
  t.totalMs = Date.now() - t0;
  return { ...r, timings: t };
}

async function runStarted(v: PreparedVariant, index: number, b: BenchPlan, d: BenchDeps, reference: GateFacts['reference'], t: NonNullable<BenchVariantDoc['timings']>): Promise<BenchVariantDoc> {
  const out = empty(v, 'failed', null);
  const tUp = Date.now();
  const started = await d.start(v);
  t.upMs = Date.now() - tUp;
  out.runId = started.runId;
  out.plan = started.plan ?? {};
  out.doctor = started.preflight;
  out.transport = kvTransportOf(started.preflight);
  d.onEvent({ event: 'up', name: v.name, runId: started.runId, code: started.code, reason: started.failed });
  if (started.code !== 0 || !started.runId || !started.plan) {
    // up stopped what it started (a failure, or the interrupt before ready: exit 130).
    if (d.interrupted.yes || started.code === 130) return { ...out, status: 'missing', reason: 'interrupted while starting; nothing was measured' };
    return { ...out, status: 'failed', reason: started.failed ?? `up exited ${started.code}` };
  }
  const runId = started.runId;
  const plan = started.plan;
  try {
    const python = d.python(v);
    const workers = plannedWorkerNames(plan);
    const base = {
      engine: plan.engine, router: { mode: plan.router.mode, kvEvents: plan.router.kvEvents }, workers: workers.names,
      model: v.recipeObj.model, tokenizer: v.tokenizer, reference,
    };
    // events: judge kv.events on the events the router applied (only after a load that ran: a load
    // that broke sent nothing to count).
    const judge = async (phase: 'ready' | 'after-load', loaded: boolean, events = loaded) => {
      const tg = Date.now();
      const f = await readRunFacts({ env: d.env, stateDir: d.stateDir, runId, recipe: v.recipeObj, plan, python });
      const gates = judgeGates({ ...base, checks: f.checks, lockWaits: f.lockWaits, lost: loaded ? f.lost : null, ...(events ? { kvEventsApplied: f.kvEventsApplied } : {}) });
      t.gatesMs += Date.now() - tg;
      d.onEvent({ event: 'gates', name: v.name, phase, gates });
      return gates;
    };
    out.gates = await judge('ready', false);
    const early = firstFailed(out.gates);
    if (early) return { ...out, status: 'invalid', reason: `${early.id}: ${early.summary}` };
    if (d.interrupted.yes) return { ...out, status: 'missing', reason: 'interrupted before the load' };

    const url = frontendUrl(plan);
    for (const [ci, concurrency] of b.doc.concurrency.entries()) {
      for (let repeat = 0; repeat < b.doc.repeats; repeat++) {
        // Each load run from a cold prefix cache: its own prompts and prefixes (loadSeed).
        const seed = loadSeed(b.doc, ci, repeat);
        if (d.interrupted.yes) return { ...out, status: 'missing', reason: interruptedLoad(out.runs.length) };
        const dir = dirOf(b, d);
        const artifactDir = join(dir, 'exports', slug(index, v.name), `c${concurrency}-r${repeat}`);
        mkdirSync(artifactDir, { recursive: true });
        const args = aiperfArgs({
          url, model: v.recipeObj.model, tokenizer: v.tokenizer, concurrency, requests: b.doc.requests,
          seed, shape: b.doc.load, artifactDir,
        });
        const tl = Date.now();
        const run: AiperfRun = runAiperf(d.aiperf, args, { env: aiperfEnv(d.env, v.tokenizer), logFile: join(artifactDir, 'aiperf.log'), cwd: artifactDir });
        d.interrupted.on(() => run.stop());
        const ended = await run.done;
        t.loadMs += Date.now() - tl;
        if (d.interrupted.yes) return { ...out, status: 'missing', reason: interruptedLoad(out.runs.length) };
        const file = findExport(artifactDir);
        let metrics: RunMetrics | null = null;
        let error: string | null = null;
        if (ended.error) error = `AIPerf did not start: ${ended.error}`;
        else if (ended.code !== 0) error = `AIPerf exited ${ended.code ?? ended.signal} (log: ${relative(dir, join(artifactDir, 'aiperf.log'))})`;
        else if (!file) error = `AIPerf wrote no export in ${relative(dir, artifactDir)}`;
        else {
          try {
            // Bounded: AIPerf wrote it, but whatever sits at that name is read at most 16 MiB, never through a link or a FIFO.
            const read = readBoundedSync(file, { maxBytes: MAX_EXPORT_BYTES });
            if (!read.ok) throw new Error(read.message);
            metrics = metricsFromExport(read.text);
          } catch (err) {
            error = `AIPerf's export ${relative(dir, file)} could not be read: ${(err as Error).message}`;
          }
        }
        d.onEvent({ event: 'load', name: v.name, concurrency, repeat, metrics, error, ms: Date.now() - tl });
        if (error || !metrics) {
          // A load that broke may be a worker that died: the gates say which, before the reason.
          out.gates = await judge('after-load', true, false);
          const bad = firstFailed(out.gates);
          if (bad) return { ...out, runs: [], status: 'invalid', reason: `${bad.id}: ${bad.summary}` };
          return { ...out, status: 'failed', reason: error };
        }
        const records = readRecords(artifactDir);
        const samples = records === null ? null : samplesFromRecords(records);
        out.runs.push({ concurrency, repeat, seed, export: relative(dir, file!), metrics, ...(samples && samples.ttftMs.length > 0 ? { samples } : {}) });
      }
    }
    out.gates = await judge('after-load', true);
    const late = firstFailed(out.gates);
    // Invalid is never a number: what was measured on a run that failed a gate is not reported.
    if (late) return { ...out, runs: [], status: 'invalid', reason: `${late.id}: ${late.summary}` };
    return { ...out, status: 'measured', reason: null };
  } finally {
    const tt = Date.now();
    const td = await d.teardown(runId);
    t.teardownMs = Date.now() - tt;
    d.onEvent({ event: 'teardown', name: v.name, runId, remaining: td.remaining, ms: t.teardownMs });
  }
}

/**
 * AIPerf's --random-seed for a variant's load run at the ci-th concurrency, repeat `repeat`: the
 * bench's seed + k, k counting the variant's load runs. AIPerf derives its prefix pool and prompts
 * from it (aiperf/dataset/generator/prompt.py: rng.derive("dataset.prompt.prefix")), so each load
 * run sends prefixes the workers have not cached yet (before: level 4 ran on level 1's prefixes, a
 * warm cache, and read as "KV routing loses"), and every variant gets the same k-th prompts. Pure.
 */
export const loadSeed = (doc: Pick<BenchDoc, 'seed' | 'repeats'>, concurrencyIndex: number, repeat: number): number =>
  doc.seed + concurrencyIndex * doc.repeats + repeat;

/** Why a variant stopped mid-load is missing: what of it was kept, said as it is. */
const interruptedLoad = (kept: number) =>
  (kept === 0 ? 'interrupted during the load, before any AIPerf run ended' : `interrupted during the load; the ${kept} AIPerf run${kept === 1 ? ' that ended before is' : 's that ended before are'} kept`);

function frontendUrl(plan: Plan): string {
  const fe = plan.processes.find((p) => p.role === 'frontend');
  return `http://127.0.0.1:${fe?.ports.http ?? DEFAULT_FRONTEND_PORT}`;
}

/** A folder name for a variant's exports: its position and name, safe as one path part. */
export const slug = (index: number, name: string) => `${String(index + 1).padStart(2, '0')}-${name.replace(/[^\w.-]+/g, '_')}`;

/** Helper for start(): the facts of the start's events (plan, preflight, ready, failed). */
export function startedFrom(events: UpEvent[], code: number): Started {
  let runId: string | null = null;
  let plan: Plan | null = null;
  let preflight: Started['preflight'] = [];
  let failed: string | null = null;
  for (const e of events) {
    if (e.event === 'plan') {
      plan = e.plan;
      runId = e.runId ?? runId;
    }
    else if (e.event === 'run' || e.event === 'ready') runId = e.runId;
    else if (e.event === 'preflight') preflight = e.checks.map(({ id, status, summary }) => ({ id, status, summary }));
    else if (e.event === 'failed' && failed === null) failed = e.process ? `${e.process}: ${e.reason}` : e.reason;
    else if (e.event === 'stopped' && runId === null) runId = e.runId;
  }
  // A preflight failure names only the check ids; up prints their findings above, bench has only
  // this reason to show: say what each check found.
  const fails = preflight.filter((c) => c.status === 'fail');
  if (failed?.startsWith('preflight: ') && fails.length > 0) failed += ` (${fails.map((c) => `${c.id}: ${c.summary}`).join('; ')})`;
  return { code, runId, plan, preflight, failed };
}
