import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runBench, slug, type BenchDeps, type BenchDoc, type BenchEvent, type PreparedVariant, type Started } from '../../../src/run/bench.js';
import { parseBenchResult } from '../../../src/bench/result.js';
import type { AiperfProgram } from '../../../src/host/python/aiperf.js';
import type { Plan } from '../../../src/plan/types.js';
import { DEFAULT_FRONTEND_PORT } from '../../../src/defaults.js';
import { FIXTURES } from '../../helpers/cli.js';

// run/bench.ts runBench, each rare way a variant ends (issue 30): a start that fails or is
// interrupted, an interrupt between ready and the load or between two load runs, AIPerf that does
// not start, writes no export or a FIFO, a load that broke beside a worker that died, the reference
// variant of the model.same gate, where AIPerf is pointed and where its files go. up, teardown and
// the run's facts are fakes; AIPerf is the fake program of test/fixtures/aiperf/bin sending no request.
vi.mock('../../../src/run/bench-facts.js', async (orig) => ({
  ...(await orig<typeof import('../../../src/run/bench-facts.js')>()),
  readRunFacts: vi.fn(async () => facts()),
}));
const okChecks = {
  'frontend.models': { status: 'pass', summary: '2 of 2 workers counted', evidence: {} },
  'kv.events': { status: 'pass', summary: '2 workers publish KV events', evidence: {} },
  'kv.allocated': { status: 'skip', summary: 'mocker', evidence: {} },
};
const seen = { ok: 4, rejected: 0, byWorker: { 'agg-0': 4 } };
const okFacts = () => ({ checks: okChecks, lockWaits: [], lost: [], kvEventsApplied: seen, live: true });
let facts: () => unknown = okFacts;

// The frontend is not the first process: the URL must come from the frontend's own port.
const FE_PORT = 18123;
const plan = {
  recipe: 'mocker', engine: 'mocker', model: 'M', router: { mode: 'kv', kvEvents: true },
  processes: [
    { name: 'agg-0', role: 'agg', argv: [], ports: { http: 18999 } },
    { name: 'frontend', role: 'frontend', argv: [], ports: { http: FE_PORT } },
    { name: 'agg-1', role: 'agg', argv: [] },
  ],
} as unknown as Plan;

const fakeAiperf: AiperfProgram = { file: join(FIXTURES, 'aiperf', 'bin', 'aiperf'), prefix: [], found: 'test', version: '0.13.0' };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  facts = okFacts;
});

interface Opts { env?: Record<string, string>; models?: string[]; control?: { gate: string; why: string }; concurrency?: number[]; repeats?: number }

function setup(names: string[], o: Opts = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'dd-bench-outcomes-'));
  dirs.push(dir);
  const variants: PreparedVariant[] = names.map((name, i) => ({
    name, recipe: 'mocker', sets: {}, unmeasurable: null, ...(i === 0 && o.control ? { control: o.control } : {}),
    recipeObj: { model: o.models?.[i] ?? 'M', python: 'python3' } as PreparedVariant['recipeObj'], tokenizer: 'M',
  }));
  const doc: BenchDoc = {
    schemaVersion: 1, id: 'b1', startedAt: '2026-12-05T14:00:00.000Z', endedAt: null, argv: ['bench'], preset: null,
    seed: 0, requests: 8, concurrency: o.concurrency ?? [1], repeats: o.repeats ?? 1, interrupted: false, isolation: 'fresh-prefixes',
    machine: { gpu: null, driver: null, cudaDriver: null, dynamo: '1.6.1', vllm: null, aiperf: '0.13.0', python: 'python3' },
    load: { inputTokens: 32, outputTokens: 16, prefixes: null }, variants: [],
  };
  const events: BenchEvent[] = [];
  const torn: string[] = [];
  const listeners: (() => void)[] = [];
  const interrupted = { yes: false, on: (f: () => void) => (interrupted.yes ? f() : listeners.push(f)) };
  const interrupt = () => {
    interrupted.yes = true;
    for (const f of listeners.splice(0)) f();
  };
  const deps: BenchDeps = {
    env: { ...process.env, FAKE_AIPERF_REQUESTS: '0', ...o.env }, stateDir: dir, python: () => 'python3', aiperf: fakeAiperf, interrupted,
    start: async (v): Promise<Started> => ({ code: 0, runId: `run-${v.name}`, plan, preflight: [], failed: null }),
    teardown: async (runId) => {
      torn.push(runId);
      return { remaining: 0 };
    },
    onEvent: (e) => void events.push(e),
  };
  const exportsOf = (name: string, index = 0) => join(dir, 'bench', 'b1', 'exports', slug(index, name));
  const stored = () => {
    const p = parseBenchResult(readFileSync(join(dir, 'bench', 'b1', 'result.json'), 'utf8'), 'b1');
    if (!p.ok) throw new Error(p.reason);
    return p.result;
  };
  return { dir, variants, doc, deps, events, torn, interrupt, exportsOf, stored };
}

describe('runBench: a start that did not give a live run', () => {
  it('up exited 0 but named no run: FAILED with up\'s exit, nothing loaded, nothing torn down', async () => {
    const s = setup(['a']);
    s.deps.start = async () => ({ code: 0, runId: null, plan: null, preflight: [], failed: null });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'failed', reason: 'up exited 0', runs: [], runId: null });
    expect(s.events.map((e) => e.event)).toEqual(['variant', 'up', 'done']);
    expect(s.torn).toEqual([]);
  });

  it('up interrupted before ready (exit 130): MISSING, not failed, though no stop signal reached the bench', async () => {
    const s = setup(['a', 'b']);
    s.deps.start = async (v) => (v.name === 'a' ? { code: 130, runId: null, plan: null, preflight: [], failed: 'interrupted' } : { code: 0, runId: 'run-b', plan, preflight: [], failed: null });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'missing', reason: 'interrupted while starting; nothing was measured' });
    expect(out.variants[1].status).toBe('measured');
    expect(out.interrupted).toBe(false);
  });

  it('the stop signal came while up was starting (up exited 1): MISSING, and the next variant is never started', async () => {
    const s = setup(['a', 'b']);
    const asked: string[] = [];
    s.deps.start = async (v) => {
      asked.push(v.name);
      s.interrupt();
      return { code: 1, runId: null, plan: null, preflight: [], failed: 'frontend: exited with code 1' };
    };
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'missing', reason: 'interrupted while starting; nothing was measured' });
    expect(out.variants[1]).toMatchObject({ status: 'missing', reason: 'not run: the bench was interrupted before it' });
    expect(asked).toEqual(['a']);
    expect(out.interrupted).toBe(true);
    expect(s.stored().interrupted).toBe(true);
  });
});

describe('runBench: interrupts between the steps of a live variant', () => {
  it('between the gates at ready and the load: MISSING "interrupted before the load", no AIPerf folder, torn down', async () => {
    const s = setup(['a']);
    s.deps.onEvent = (e) => {
      if (e.event === 'gates' && e.phase === 'ready') s.interrupt();
    };
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'missing', reason: 'interrupted before the load', runs: [] });
    expect(existsSync(s.exportsOf('a'))).toBe(false);
    expect(s.torn).toEqual(['run-a']);
  });

  it('after the first load run ended: MISSING, the 1 run kept (singular), the next load never started', async () => {
    const s = setup(['a'], { concurrency: [1, 4] });
    s.deps.onEvent = (e) => {
      if (e.event === 'load') s.interrupt();
    };
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'missing', reason: 'interrupted during the load; the 1 AIPerf run that ended before is kept' });
    expect(out.variants[0].runs.map((r) => r.concurrency)).toEqual([1]);
    expect(existsSync(join(s.exportsOf('a'), 'c1-r0', 'profile_export_aiperf.json'))).toBe(true);
    expect(existsSync(join(s.exportsOf('a'), 'c4-r0'))).toBe(false);
    expect(s.torn).toEqual(['run-a']);
  });

  it('after two load runs ended: the reason counts them (plural)', async () => {
    const s = setup(['a'], { concurrency: [1], repeats: 3 });
    let loads = 0;
    s.deps.onEvent = (e) => {
      if (e.event === 'load' && ++loads === 2) s.interrupt();
    };
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'missing', reason: 'interrupted during the load; the 2 AIPerf runs that ended before are kept' });
    expect(existsSync(join(s.exportsOf('a'), 'c1-r2'))).toBe(false);
  });

  it('during the first load run: the reason says no run ended', async () => {
    const s = setup(['a'], { env: { FAKE_AIPERF: 'hang' } });
    s.deps.onEvent = (e) => {
      if (e.event === 'gates') setImmediate(s.interrupt);
    };
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'missing', reason: 'interrupted during the load, before any AIPerf run ended', runs: [] });
  });
});

describe('runBench: a load that gave no number', () => {
  it('AIPerf that cannot be started: FAILED "AIPerf did not start" naming the program', async () => {
    const s = setup(['a']);
    const missing = join(s.dir, 'no-such-aiperf');
    s.deps.aiperf = { ...fakeAiperf, file: missing };
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0].status).toBe('failed');
    expect(out.variants[0].reason).toBe(`AIPerf did not start: ${missing}: ENOENT`);
    expect(s.torn).toEqual(['run-a']);
  });

  it('AIPerf that exits 0 and writes no export: FAILED naming the folder it should be in', async () => {
    const s = setup(['a']);
    s.deps.aiperf = { ...fakeAiperf, file: 'true', prefix: [] };
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'failed', reason: 'AIPerf wrote no export in exports/01-a/c1-r0' });
    const load = s.events.find((e) => e.event === 'load');
    expect(load).toMatchObject({ metrics: null, error: 'AIPerf wrote no export in exports/01-a/c1-r0' });
  });

  it('a FIFO where the export goes: FAILED "could not be read", never blocks', async () => {
    const s = setup(['a'], { env: { FAKE_AIPERF: 'export-fifo' } });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0].status).toBe('failed');
    expect(out.variants[0].reason).toMatch(/^AIPerf's export exports\/01-a\/c1-r0\/profile_export_aiperf\.json could not be read: \S/);
  });

  it('a broken load beside a worker that died: INVALID by processes.alive (the loss counts), not the AIPerf reason', async () => {
    let calls = 0;
    facts = () => ({ checks: okChecks, lockWaits: [], lost: ++calls === 2 ? [{ name: 'agg-1', how: 'was killed by SIGKILL', at: null }] : [], live: true });
    const s = setup(['a'], { env: { FAKE_AIPERF: 'fail' } });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'invalid', reason: 'processes.alive: agg-1 was killed by SIGKILL during the load: the run was degraded', runs: [] });
    expect(s.events.filter((e) => e.event === 'gates').map((e) => (e as { phase: string }).phase)).toEqual(['ready', 'after-load']);
  });

  it('a broken load sent no KV event: kv.events is not judged on it, the reason stays AIPerf\'s', async () => {
    facts = () => ({ checks: okChecks, lockWaits: [], lost: [], kvEventsApplied: { ok: 0, rejected: 0, byWorker: {} }, live: true });
    const s = setup(['a'], { env: { FAKE_AIPERF: 'fail' } });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'failed', reason: 'AIPerf exited 1 (log: exports/01-a/c1-r0/aiperf.log)' });
  });
});

describe('runBench: what a measured variant records', () => {
  it('AIPerf is pointed at the frontend\'s own port (not the first process\'s); a load with no request stores no samples', async () => {
    const s = setup(['a']);
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0].status).toBe('measured');
    const log = readFileSync(join(s.exportsOf('a'), 'c1-r0', 'aiperf.log'), 'utf8');
    expect(log).toContain(`--url http://127.0.0.1:${FE_PORT} `);
    expect(out.variants[0].runs).toHaveLength(1);
    expect('samples' in out.variants[0].runs[0]).toBe(false);
    expect('samples' in s.stored().variants[0].runs[0]).toBe(false);
  });

  it('a plan with no frontend port: AIPerf is pointed at the default frontend port', async () => {
    const s = setup(['a']);
    const bare = { ...plan, processes: [{ name: 'agg-0', role: 'agg', argv: [] }, { name: 'frontend', role: 'frontend', argv: [], ports: {} }] } as unknown as Plan;
    s.deps.start = async () => ({ code: 0, runId: 'run-a', plan: bare, preflight: [], failed: null });
    await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    const log = readFileSync(join(s.exportsOf('a'), 'c1-r0', 'aiperf.log'), 'utf8');
    expect(log).toContain(`--url http://127.0.0.1:${DEFAULT_FRONTEND_PORT} `);
  });

  it('a variant name that is not one path part: its exports folder replaces each run of other characters by one "_"', async () => {
    const s = setup(['kv  router/x']);
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0].runs[0].export).toBe('exports/01-kv_router_x/c1-r0/profile_export_aiperf.json');
    expect(slug(9, 'a.b-c_d')).toBe('10-a.b-c_d');
  });

  it('a preset\'s control is stored as given; a variant without one stores null', async () => {
    const control = { gate: 'kv.events', why: 'the control: KV events off' };
    const s = setup(['a', 'b'], { control });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0].control).toEqual(control);
    expect(out.variants[1].control).toBeNull();
    expect(s.stored().variants[0].control).toEqual(control);
  });

  it('timings are durations of this bench (never an epoch), bounded by the wall time it took', async () => {
    const s = setup(['a']);
    const t0 = Date.now();
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    const wall = Date.now() - t0;
    const t = out.variants[0].timings!;
    for (const ms of [t.totalMs, t.gatesMs, t.loadMs, t.upMs, t.teardownMs]) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(wall);
    }
    const load = s.events.find((e) => e.event === 'load') as { ms: number };
    expect(load.ms).toBeGreaterThanOrEqual(0);
    expect(load.ms).toBeLessThanOrEqual(wall);
  });
});

describe('runBench: the reference variant of model.same', () => {
  it('every later variant is compared with the first one measured, not with the one before it', async () => {
    const s = setup(['a', 'b', 'c'], { models: ['M', 'N', 'N'] });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants.map((v) => v.status)).toEqual(['measured', 'invalid', 'invalid']);
    expect(out.variants[1].reason).toBe('model.same: differs from the first variant: model N (a: M)');
    expect(out.variants[2].reason).toBe('model.same: differs from the first variant: model N (a: M)');
  });

  it('a first variant that failed is still the reference', async () => {
    const s = setup(['a', 'b'], { models: ['M', 'N'], env: { FAKE_AIPERF: 'fail' } });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0].status).toBe('failed');
    expect(out.variants[1]).toMatchObject({ status: 'invalid', reason: 'model.same: differs from the first variant: model N (a: M)' });
  });

  it('a first variant left missing (up interrupted, exit 130) is no reference: the next one is', async () => {
    const s = setup(['a', 'b', 'c'], { models: ['M', 'N', 'N'] });
    s.deps.start = async (v) => (v.name === 'a' ? { code: 130, runId: null, plan: null, preflight: [], failed: null } : { code: 0, runId: `run-${v.name}`, plan, preflight: [], failed: null });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants.map((v) => v.status)).toEqual(['missing', 'measured', 'measured']);
  });
});
