import { describe, expect, it, vi } from 'vitest';
import { doctorOk, runChecks, tally } from '../../../src/doctor/runner.js';
import { preflightIds, selectChecks } from '../../../src/doctor/registry.js';
import { CHECK_IDS, fail, pass, skip, warn, type Check, type Facts } from '../../../src/doctor/types.js';
import { fakeFacts } from '../../helpers/facts.js';

// What the user reads when a check cannot finish: a crash names its error, a timeout names the
// probe it waited for and the two flags that help.
const never = <T>() => new Promise<T>(() => {});

describe('runChecks: a check that does not finish', () => {
  it('a crash: the error message, no fix, no evidence, the check id and title kept', async () => {
    const boom: Check = { id: 'gpu.driver', title: 'NVIDIA driver and GPU', run: async () => { throw new TypeError('cannot read x'); } };
    const [o] = await runChecks([boom], fakeFacts(), { timeoutMs: 1000 });
    expect(o).toMatchObject({ id: 'gpu.driver', title: 'NVIDIA driver and GPU', status: 'fail', summary: 'check crashed: cannot read x', details: [], fix: null, evidence: {} });
    expect(o.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a crash with something that is not an Error still says what it was', async () => {
    const odd: Check = { id: 'x', title: 'X', run: () => Promise.reject('plain string') };
    const [o] = await runChecks([odd], fakeFacts(), { timeoutMs: 1000 });
    expect(o.summary).toBe('check crashed: plain string');
  });

  it('a timeout with every probe answered says a probe did not answer, and doubles the limit in the fix', async () => {
    const hang: Check = { id: 'hf.locks', title: 'H', run: async (f) => { await f.gpu(); return never(); } };
    const [o] = await runChecks([hang], fakeFacts(), { timeoutMs: 30 });
    expect(o).toMatchObject({
      status: 'fail',
      summary: 'timed out after 30 ms (a probe did not answer)',
      details: [],
      fix: 'raise the limit with --timeout 60, or skip it with --skip hf.locks',
      evidence: { timedOut: true, timeoutMs: 30, waitingFor: [] },
    });
  });

  it('names every probe still pending, in the order asked, by what it runs', async () => {
    const facts: Facts = { ...fakeFacts(), gpu: never, computeApps: never, processes: never, python: never, compat: never, hfModel: never, ucx: never, ports: never, run: never, logs: never, frontend: never, noLogs: never };
    const all: Check = {
      id: 'a', title: 'A',
      run: async (f) => {
        void f.gpu(); void f.computeApps(); void f.processes(); void f.python(); void f.compat(); void f.hfModel();
        void f.ucx(); void f.ports(); void f.run(); void f.logs(); void f.frontend(); void f.noLogs();
        return never();
      },
    };
    const [o] = await runChecks([all], facts, { timeoutMs: 30 });
    expect(o.summary).toBe(
      'timed out after 30 ms waiting for nvidia-smi, nvidia-smi --query-compute-apps, the process list (ps), the Python interpreter, ldconfig -p, ' +
        "the Hugging Face cache, ucx_info, the port probe, the run state, reading the logs, the frontend's /health and /v1/models, noLogs",
    );
  });

  it('a probe that failed is no longer waited for', async () => {
    const facts: Facts = { ...fakeFacts(), gpu: () => Promise.reject(new Error('nvidia-smi died')), ucx: never };
    const c: Check = { id: 'a', title: 'A', run: async (f) => { await f.gpu().catch(() => null); void f.ucx(); return never(); } };
    const [o] = await runChecks([c], facts, { timeoutMs: 30 });
    expect(o.summary).toBe('timed out after 30 ms waiting for ucx_info');
  });

  it('plain values of the facts (the recipe, the plan) pass through untouched', async () => {
    const facts = fakeFacts();
    const c: Check = { id: 'a', title: 'A', run: async (f) => pass(`${f.recipe.name} ${f.self.pid} ${f.plan === facts.plan}`) };
    const [o] = await runChecks([c], facts, { timeoutMs: 1000 });
    expect(o.summary).toBe('test 4242 true');
  });

  it('the check index is passed as each one settles', async () => {
    const seen: [string, number][] = [];
    const mk = (id: string): Check => ({ id, title: id, run: async () => pass(id) });
    await runChecks([mk('a'), mk('b'), mk('c')], fakeFacts(), { timeoutMs: 1000, onSettled: (o, i) => seen.push([o.id, i]) });
    expect(seen.sort()).toEqual([['a', 0], ['b', 1], ['c', 2]]);
  });
});

describe('tally and doctorOk', () => {
  const outcome = (r: ReturnType<typeof pass>) => ({ ...r, id: 'x', title: 'X', durationMs: 0 });
  it('counts each status; a skip never fails doctor, even with --strict', () => {
    const out = [outcome(pass('a')), outcome(skip('b')), outcome(skip('c'))];
    expect(tally(out)).toEqual({ pass: 1, warn: 0, fail: 0, skip: 2 });
    expect(doctorOk(out, true)).toBe(true);
  });
  it('a fail fails with or without --strict', () => {
    const out = [outcome(pass('a')), outcome(fail('b', null))];
    expect(doctorOk(out, false)).toBe(false);
    expect(doctorOk(out, true)).toBe(false);
    expect(doctorOk([outcome(warn('w', null))], false)).toBe(true);
  });
});

describe('selectChecks', () => {
  it('several unknown ids are all named, each quoted, with every valid id', () => {
    expect(() => selectChecks({ only: ['gpu.driver', 'gpu', 'kv'] })).toThrow(`--only: unknown check id "gpu", "kv"; valid ids: ${CHECK_IDS.join(', ')}`);
  });
  it('an unknown --skip id is an error too, named with --skip', () => {
    expect(() => selectChecks({ skip: ['logs'] })).toThrow(`--skip: unknown check id "logs"; valid ids: ${CHECK_IDS.join(', ')}`);
  });
  it('empty --only and --skip select every check; both together apply both', () => {
    expect(selectChecks({ only: [], skip: [] }).map((c) => c.id)).toEqual([...CHECK_IDS]);
    expect(selectChecks().map((c) => c.id)).toEqual([...CHECK_IDS]);
    expect(selectChecks({ only: ['gpu.driver', 'ports.free'], skip: ['gpu.driver'] }).map((c) => c.id)).toEqual(['ports.free']);
  });
});

describe('runChecks: timing', () => {
  it('a finished check leaves no timer behind (doctor exits when its checks are done, not at --timeout)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const quick: Check = { id: 'q', title: 'Q', run: async () => pass('ok') };
      const boom: Check = { id: 'b', title: 'B', run: async () => { throw new Error('x'); } };
      await runChecks([quick, boom], fakeFacts(), { timeoutMs: 60_000 });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('each outcome carries how long its check took', async () => {
    const slow: Check = { id: 's', title: 'S', run: () => new Promise((r) => setTimeout(() => r(pass('done')), 40)) };
    const [o] = await runChecks([slow], fakeFacts(), { timeoutMs: 5000 });
    expect(o.durationMs).toBeGreaterThanOrEqual(35);
    expect(o.durationMs).toBeLessThan(5000);
  });
});

describe('result builders and the preflight list', () => {
  it('a result built without detail lines or evidence has none', () => {
    for (const r of [pass('a'), skip('b'), warn('c', 'f'), fail('d', 'f')]) {
      expect(r.details, r.status).toEqual([]);
      expect(r.evidence, r.status).toEqual({});
    }
  });

  it('up runs these checks before starting an aggregated recipe, in this order', () => {
    expect(preflightIds({ processes: [] })).toEqual(['gpu.driver', 'gpu.memory', 'cuda.compat', 'python.env', 'procs.leftover', 'hf.locks', 'ports.free']);
  });
});
