import { mkdtempSync, rmSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runBench, startedFrom, type BenchDeps, type BenchDoc, type PreparedVariant } from '../../../src/run/bench.js';
import { parseBenchResult } from '../../../src/bench/result.js';
import type { AiperfProgram } from '../../../src/host/python/aiperf.js';
import type { Plan } from '../../../src/plan/types.js';
import { FIXTURES } from '../../helpers/cli.js';

// The bench's order of steps with its I/O handed in: up (start), teardown, and the facts the gates
// read are fakes; AIPerf is the fake program of test/fixtures/aiperf/bin (the real export's text),
// sending no request (FAKE_AIPERF_REQUESTS=0: no frontend listens here).
vi.mock('../../../src/run/bench-facts.js', async (orig) => ({
  ...(await orig<typeof import('../../../src/run/bench-facts.js')>()),
  readRunFacts: vi.fn(async () => facts()),
}));
const seen = { ok: 4, rejected: 0, byWorker: { 'w-a': 4 } };
let facts: () => unknown = () => ({ checks: okChecks, lockWaits: [], lost: [], kvEventsApplied: seen, live: true });
const okChecks = {
  'frontend.models': { status: 'pass', summary: '2 of 2 workers counted', evidence: {} },
  'kv.events': { status: 'pass', summary: '2 workers publish KV events', evidence: {} },
  'kv.allocated': { status: 'skip', summary: 'mocker', evidence: {} },
};

const plan = {
  recipe: 'mocker', engine: 'mocker', model: 'M', router: { mode: 'kv', kvEvents: true },
  processes: [
    { name: 'frontend', role: 'frontend', argv: [], ports: { http: 18000 } },
    { name: 'agg-0', role: 'agg', argv: [] },
    { name: 'agg-1', role: 'agg', argv: [] },
  ],
} as unknown as Plan;

const aiperf: AiperfProgram = { file: join(FIXTURES, 'aiperf', 'bin', 'aiperf'), prefix: [], found: 'test', version: '0.13.0' };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  facts = () => ({ checks: okChecks, lockWaits: [], lost: [], kvEventsApplied: seen, live: true });
});

function setup(names: string[], o: { env?: Record<string, string>; unmeasurable?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'dd-bench-'));
  dirs.push(dir);
  const variants: PreparedVariant[] = names.map((name, i) => ({
    name, recipe: 'mocker', sets: {}, unmeasurable: i === 1 && o.unmeasurable ? o.unmeasurable : null,
    recipeObj: { model: 'M', python: 'python3' } as PreparedVariant['recipeObj'], tokenizer: 'M',
  }));
  const doc: BenchDoc = {
    schemaVersion: 1, id: 'b1', startedAt: '2026-12-05T14:00:00.000Z', endedAt: null, argv: ['bench'], preset: null,
    seed: 0, requests: 24, concurrency: [1, 4], repeats: 2, interrupted: false, isolation: 'fresh-prefixes',
    machine: { gpu: null, driver: null, cudaDriver: null, dynamo: '1.6.1', vllm: null, aiperf: '0.13.0', python: 'python3' },
    load: { inputTokens: 32, outputTokens: 16, prefixes: null }, variants: [],
  };
  const events: string[] = [];
  const torn: string[] = [];
  const listeners: (() => void)[] = [];
  const interrupted = { yes: false, on: (f: () => void) => (interrupted.yes ? f() : listeners.push(f)) };
  const deps: BenchDeps = {
    env: { ...process.env, FAKE_AIPERF_REQUESTS: '0', ...o.env }, stateDir: dir, python: () => 'python3', aiperf, interrupted,
    start: async (v) => ({ code: 0, runId: `run-${v.name}`, plan, preflight: [{ id: 'gpu.driver', status: 'skip', summary: 'mocker' }], failed: null }),
    teardown: async (runId) => {
      torn.push(runId);
      return { remaining: 0 };
    },
    onEvent: (e) => events.push(e.event === 'done' ? `${e.name}:${e.status}` : e.event),
  };
  const interrupt = () => {
    interrupted.yes = true;
    for (const f of listeners.splice(0)) f();
  };
  return { dir, variants, doc, deps, events, torn, interrupt };
}

describe('runBench', () => {
  it('each variant: start, gates, AIPerf at every concurrency x repeat, gates again, teardown; the stored result validates', async () => {
    const s = setup(['a', 'b']);
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants.map((v) => v.status)).toEqual(['measured', 'measured']);
    expect(out.variants[0].runs.map((r) => [r.concurrency, r.repeat])).toEqual([[1, 0], [1, 1], [4, 0], [4, 1]]);
    expect(out.variants[0].runs[0].export).toBe('exports/01-a/c1-r0/profile_export_aiperf.json');
    expect(out.variants[0].runs[0].metrics.ttftP50Ms).toBeCloseTo(57.08, 2);
    expect(s.torn).toEqual(['run-a', 'run-b']);
    const stored = parseBenchResult(readFileSync(join(s.dir, 'bench', 'b1', 'result.json'), 'utf8'), 'b1');
    expect(stored.ok).toBe(true);
    expect(out.endedAt).not.toBeNull();
    // Where the time went: bench's own share is what total leaves beside up, AIPerf and teardown.
    const t = out.variants[0].timings!;
    expect(t.loadMs).toBeGreaterThan(0);
    expect(t.totalMs).toBeGreaterThanOrEqual(t.upMs + t.loadMs + t.teardownMs);
  });

  it('a gate that fails at ready: INVALID with the gate, no load, no number, still torn down', async () => {
    facts = () => ({ checks: { ...okChecks, 'kv.events': { status: 'fail', summary: 'the router reports kv_event_publisher_disabled', evidence: {} } }, lockWaits: [], lost: [], live: true });
    const s = setup(['a']);
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'invalid', reason: 'kv.events: the router reports kv_event_publisher_disabled', runs: [] });
    expect(s.events).not.toContain('load');
    expect(s.torn).toEqual(['run-a']);
  });

  it('a KV router that saw no KV event during the load (no warning either): INVALID by kv.events after the load, its numbers dropped', async () => {
    facts = () => ({ checks: okChecks, lockWaits: [], lost: [], kvEventsApplied: { ok: 0, rejected: 0, byWorker: {} }, live: true });
    const s = setup(['a']);
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'invalid', runs: [] });
    expect(out.variants[0].reason).toMatch(/^kv\.events: no KV event reached the router's index during the run/);
    expect(s.events).toContain('load');
  });

  it('a worker that died during the load: INVALID by processes.alive, its numbers dropped, the next variant still runs', async () => {
    let calls = 0;
    facts = () => ({ checks: okChecks, lockWaits: [], lost: ++calls === 2 ? [{ name: 'agg-1', how: 'was killed by SIGKILL', at: null }] : [], live: true });
    const s = setup(['a', 'b']);
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0]).toMatchObject({ status: 'invalid', reason: 'processes.alive: agg-1 was killed by SIGKILL during the load: the run was degraded', runs: [] });
    expect(out.variants[1].status).toBe('measured');
  });

  it('AIPerf failing is FAILED with its exit and log; up failing is FAILED with up\'s reason', async () => {
    const s = setup(['a'], { env: { FAKE_AIPERF: 'fail' } });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[0].status).toBe('failed');
    expect(out.variants[0].reason).toBe('AIPerf exited 1 (log: exports/01-a/c1-r0/aiperf.log)');
    const t = setup(['a']);
    t.deps.start = async () => ({ code: 1, runId: null, plan: null, preflight: [], failed: 'preflight: procs.leftover failed; nothing was started' });
    const o2 = await runBench({ doc: t.doc, variants: t.variants }, t.deps);
    expect(o2.variants[0]).toMatchObject({ status: 'failed', reason: 'preflight: procs.leftover failed; nothing was started' });
    expect(t.torn).toEqual([]);
  });

  it('an unmeasurable variant is missing with its reason, never started', async () => {
    const s = setup(['a', 'b'], { unmeasurable: 'the mocker has no OpenAI server of its own' });
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.variants[1]).toMatchObject({ status: 'missing', reason: 'the mocker has no OpenAI server of its own' });
    expect(s.torn).toEqual(['run-a']);
  });

  it('interrupted during the load: AIPerf stopped, the variant torn down, the rest missing, kept on disk', async () => {
    const s = setup(['a', 'b'], { env: { FAKE_AIPERF: 'hang' } });
    s.deps.onEvent = (e) => {
      if (e.event === 'gates') setTimeout(s.interrupt, 200);
    };
    const out = await runBench({ doc: s.doc, variants: s.variants }, s.deps);
    expect(out.interrupted).toBe(true);
    expect(out.variants[0].status).toBe('missing');
    expect(out.variants[0].reason).toMatch(/interrupted during the load/);
    expect(out.variants[1]).toMatchObject({ status: 'missing', reason: 'not run: the bench was interrupted before it' });
    expect(s.torn).toEqual(['run-a']);
    expect(parseBenchResult(readFileSync(join(s.dir, 'bench', 'b1', 'result.json'), 'utf8')).ok).toBe(true);
    expect(existsSync(join(s.dir, 'bench', 'b1', 'exports', '01-a', 'c1-r0', 'aiperf.log'))).toBe(true);
  });
});

describe('startedFrom (up --json events)', () => {
  it('the run id and plan from the plan event, preflight verdicts, the first failure with its process', () => {
    const s = startedFrom([
      { event: 'plan', runId: 'r1', plan },
      { event: 'preflight', ok: false, checks: [{ id: 'procs.leftover', title: 't', status: 'fail', summary: '1 leftover', details: [], fix: null }] },
      { event: 'failed', reason: 'exited with code 1', process: 'agg-1', diagnosis: null, hint: null, lastLines: [], log: null },
    ], 1);
    expect(s).toMatchObject({ code: 1, runId: 'r1', failed: 'agg-1: exited with code 1', preflight: [{ id: 'procs.leftover', status: 'fail', summary: '1 leftover' }] });
  });

  it('a preflight failure: the reason says what each failing check found (bench shows no check list of its own)', () => {
    const check = (id: string, status: 'pass' | 'warn' | 'fail', summary: string) => ({ id, title: 't', status, summary, details: [], fix: null });
    const s = startedFrom([
      { event: 'plan', runId: null, plan },
      { event: 'preflight', ok: false, checks: [check('procs.leftover', 'warn', '1 other run'), check('ports.free', 'fail', 'port 18655 (frontend.http) is in use by pid 26388 (python3 -m http.server 18655)'), check('hf.locks', 'fail', '1 stale lock')] },
      { event: 'failed', reason: 'preflight: ports.free, hf.locks failed; nothing was started', process: null, diagnosis: null, hint: null, lastLines: [], log: null },
    ], 1);
    expect(s.failed).toBe('preflight: ports.free, hf.locks failed; nothing was started (ports.free: port 18655 (frontend.http) is in use by pid 26388 (python3 -m http.server 18655); hf.locks: 1 stale lock)');
  });
});
