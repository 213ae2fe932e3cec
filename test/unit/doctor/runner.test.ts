import { describe, expect, it } from 'vitest';
import { doctorOk, runChecks, tally } from '../../../src/doctor/runner.js';
import { ALL_CHECKS, preflightIds, selectChecks } from '../../../src/doctor/registry.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { RecipeInput } from '../../../src/recipe/schema.js';
import { CHECK_IDS, pass, warn, type Check } from '../../../src/doctor/types.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

const after = (ms: number, c: Omit<Check, 'run'> & { result: Awaited<ReturnType<Check['run']>> }): Check => ({
  id: c.id,
  title: c.title,
  run: () => new Promise((r) => setTimeout(() => r(c.result), ms)),
});

describe('runChecks', () => {
  it('starts all checks at once and returns them in declared order', async () => {
    const order: string[] = [];
    const checks = [
      after(60, { id: 'a', title: 'A', result: pass('slow') }),
      after(5, { id: 'b', title: 'B', result: warn('fast', 'do x') }),
    ];
    const t0 = performance.now();
    const out = await runChecks(checks, fakeFacts(), { timeoutMs: 1000, onSettled: (o) => order.push(o.id) });
    expect(out.map((o) => o.id)).toEqual(['a', 'b']);
    expect(order).toEqual(['b', 'a']); // settled as they finished
    expect(performance.now() - t0).toBeLessThan(110); // concurrent, not 65 ms in sequence plus slack
  });

  it('reports a check that throws as fail with the reason', async () => {
    const boom: Check = { id: 'x', title: 'X', run: async () => { throw new Error('no facts'); } };
    const [o] = await runChecks([boom], fakeFacts(), { timeoutMs: 1000 });
    expect(o.status).toBe('fail');
    expect(o.summary).toContain('no facts');
  });

  it('reports a check that exceeds its time as fail and does not wait for it', async () => {
    const hang: Check = { id: 'h', title: 'H', run: () => new Promise(() => {}) };
    const t0 = performance.now();
    const [o] = await runChecks([hang], fakeFacts(), { timeoutMs: 50 });
    expect(o.status).toBe('fail');
    expect(o.summary).toMatch(/timed out after 50 ms/);
    expect(o.fix).toContain('--skip h');
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it('names the probe a timed-out check was waiting for', async () => {
    const facts = { ...fakeFacts(), ucx: () => new Promise<never>(() => {}) };
    const waits: Check = { id: 'ucx.transports', title: 'U', run: async (f) => { await f.gpu(); await f.ucx(); return pass('x'); } };
    const [o] = await runChecks([waits], facts, { timeoutMs: 50 });
    expect(o.status).toBe('fail');
    expect(o.summary).toBe('timed out after 50 ms waiting for ucx_info');
    expect(o.evidence).toEqual({ timedOut: true, timeoutMs: 50, waitingFor: ['ucx_info'] });
  });

  it('judges exit: fail always, warn only with --strict', async () => {
    const out = await runChecks([after(0, { id: 'w', title: 'W', result: warn('meh', null) })], fakeFacts(), { timeoutMs: 100 });
    expect(tally(out)).toEqual({ pass: 0, warn: 1, fail: 0, skip: 0 });
    expect(doctorOk(out, false)).toBe(true);
    expect(doctorOk(out, true)).toBe(false);
  });
});

describe('registry', () => {
  it('holds the twelve checks of CLI.md in order', () => {
    expect(ALL_CHECKS.map((c) => c.id)).toEqual([...CHECK_IDS]);
  });

  it('applies --only and --skip and rejects unknown ids', () => {
    expect(selectChecks({ only: ['ports.free', 'gpu.driver'] }).map((c) => c.id)).toEqual(['gpu.driver', 'ports.free']);
    expect(selectChecks({ skip: ['logs.errors'] })).toHaveLength(14);
    expect(() => selectChecks({ only: ['gpu.drvier'] })).toThrow(/unknown check id "gpu.drvier".*valid ids: gpu.driver/);
  });

  it('preflights python.env always, ucx only for plans that move KV over NIXL', () => {
    const plan = (recipe: RecipeInput['workers']) => buildPlan({ recipe: recipeFrom({ workers: recipe }), runDir: '/tmp/r' });
    const agg = preflightIds(plan([{ role: 'agg', gpuMemoryUtilization: 0.38 }]));
    expect(agg).toContain('python.env');
    expect(agg).not.toContain('ucx.transports');
    expect(preflightIds(plan([{ role: 'decode', gpuMemoryUtilization: 0.38 }, { role: 'prefill', gpuMemoryUtilization: 0.38 }]))).toContain('ucx.transports');
    // An aggregated worker given a NIXL connector by its own args moves KV over UCX too.
    const nixlArgs = ['--kv-transfer-config', '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'];
    expect(preflightIds(plan([{ role: 'agg', gpuMemoryUtilization: 0.38, args: nixlArgs }]))).toContain('ucx.transports');
  });
});

describe('slow probes', () => {
  it('gives a check with minTimeoutMs more time than --timeout', async () => {
    const slow: Check = { id: 's', title: 'S', minTimeoutMs: 200, run: () => new Promise((r) => setTimeout(() => r(pass('done')), 80)) };
    const [o] = await runChecks([slow], fakeFacts(), { timeoutMs: 20 });
    expect(o.status).toBe('pass');
  });
});
