import type { Engine } from './presets.js';

// Pure: how long a bench will take, before it starts and as it runs (issue 31). The bench is a
// list of steps (per variant: start, each load run, teardown); each step's time is what the same
// kind of step measured so far in this bench, else a default for the engine. A variant that ends
// early (a gate failed) drops its remaining steps.
//
// Defaults from real runs on this project's CI machine (2 cores, Dynamo 1.6.1 mocker, AIPerf 0.13.0,
// 2026-12-07): a mocker variant up in 2-20 s (with preflight), an AIPerf run costs ~12 s of its own
// start and ~570 ms a request at concurrency 1 (240 ms at 4: it scales about as concurrency^0.6).
// vLLM on a GPU: start ~2 min (model load, CUDA graphs), ~1 s a request at concurrency 1.

export type Step =
  | { kind: 'up'; variant: number }
  | { kind: 'load'; variant: number; concurrency: number; requests: number }
  | { kind: 'teardown'; variant: number };

interface Defaults { upMs: number; teardownMs: number; loadStartMs: number; requestMs: number }

const DEFAULTS: Record<Engine | 'mixed', Defaults> = {
  mocker: { upMs: 15_000, teardownMs: 2_000, loadStartMs: 12_000, requestMs: 600 },
  vllm: { upMs: 120_000, teardownMs: 10_000, loadStartMs: 12_000, requestMs: 1_000 },
  mixed: { upMs: 120_000, teardownMs: 10_000, loadStartMs: 12_000, requestMs: 1_000 },
};

/** What a bench has left to do and what its steps measured so far. */
export interface Progress {
  engine: Engine | 'mixed';
  steps: Step[];
  measured: { upMs: number[]; teardownMs: number[]; requestMs: number[] };
}

/** The steps of a bench: per variant that will run, up, every load run, teardown. */
export function benchProgress(engine: Engine | 'mixed', variants: readonly { unmeasurable: string | null }[], concurrency: readonly number[], repeats: number, requests: number): Progress {
  const steps: Step[] = [];
  variants.forEach((v, i) => {
    if (v.unmeasurable) return;
    steps.push({ kind: 'up', variant: i });
    for (const c of concurrency) for (let r = 0; r < repeats; r++) steps.push({ kind: 'load', variant: i, concurrency: c, requests });
    steps.push({ kind: 'teardown', variant: i });
  });
  return { engine, steps, measured: { upMs: [], teardownMs: [], requestMs: [] } };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const speedup = (concurrency: number) => concurrency ** 0.6;

/** The time one step is expected to take: measured steps of its kind, else the engine's default. */
export function stepMs(p: Progress, s: Step): number {
  const d = DEFAULTS[p.engine];
  if (s.kind === 'up') return p.measured.upMs.length ? mean(p.measured.upMs) : d.upMs;
  if (s.kind === 'teardown') return p.measured.teardownMs.length ? mean(p.measured.teardownMs) : d.teardownMs;
  const perRequest = p.measured.requestMs.length ? mean(p.measured.requestMs) : d.requestMs;
  return d.loadStartMs + (s.requests * perRequest) / speedup(s.concurrency);
}

/** The time left: every remaining step. */
export const remainingMs = (p: Progress): number => p.steps.reduce((n, s) => n + stepMs(p, s), 0);

/** A step ended after `ms`: it is done, and its time teaches the estimate of the others of its kind. */
export function stepDone(p: Progress, s: Step, ms: number): Progress {
  const i = p.steps.findIndex((x) => x.kind === s.kind && x.variant === s.variant && (x.kind !== 'load' || (s.kind === 'load' && x.concurrency === s.concurrency)));
  const steps = i < 0 ? p.steps : [...p.steps.slice(0, i), ...p.steps.slice(i + 1)];
  const m = { upMs: [...p.measured.upMs], teardownMs: [...p.measured.teardownMs], requestMs: [...p.measured.requestMs] };
  if (s.kind === 'up') m.upMs.push(ms);
  else if (s.kind === 'teardown') m.teardownMs.push(ms);
  else if (s.requests > 0) m.requestMs.push((Math.max(0, ms - DEFAULTS[p.engine].loadStartMs) * speedup(s.concurrency)) / s.requests);
  return { ...p, steps, measured: m };
}

/** A variant ended: its steps not run (a gate failed before the load, up failed) are dropped; its teardown stays if still to come. */
export function variantEnded(p: Progress, variant: number, keepTeardown: boolean): Progress {
  return { ...p, steps: p.steps.filter((s) => s.variant !== variant || (keepTeardown && s.kind === 'teardown')) };
}

/** 'about 3m20s', 'under 10s' (not 'about under 10s'). */
export const aboutLeft = (ms: number): string => (ms < 10_000 ? formatLeft(ms) : `about ${formatLeft(ms)}`);

/** '3m20s', '45s', 'under 10s': rounded to what a person plans with. */
export function formatLeft(ms: number): string {
  if (ms < 10_000) return 'under 10s';
  const s = Math.round(ms / 5000) * 5;
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m >= 60) return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
  return `${m}m${String(s % 60).padStart(2, '0')}s`;
}
