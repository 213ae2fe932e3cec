import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/kv.events.js';
import { recipeFrom } from '../../helpers/facts.js';
import { fakeFacts } from './facts-with-release.js';
import { pathLogs, routerPlan, routerRecipe, runLogs, runOf, sample } from './helpers.js';

const FIX_EVENTS = '"enable_kv_cache_events":true';

describe('kv.events', () => {
  it('skips for a router that does not use KV events', async () => {
    const r = await check.run(fakeFacts({ logs: await pathLogs([sample('worker-agg-ready.log')]) }, { recipe: recipeFrom() }));
    expect(r.status).toBe('skip');
    expect(r.summary).toContain('round-robin');
    const approx = await check.run(fakeFacts({}, { recipe: routerRecipe(false), plan: routerPlan(false) }));
    expect(approx.status).toBe('skip');
    expect(approx.summary).toContain('approximate');
  });

  it('--logs of a KV router with the diagnostic fails even when the plan (default agg) has no KV router', async () => {
    // `doctor --logs frontend.log` without --recipe: the log itself proves a KV router expected events.
    const r = await check.run(fakeFacts({ logs: await pathLogs([sample('frontend-kv-events-disabled.log')]) }, { recipe: recipeFrom() }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('kv_event_publisher_disabled');
    expect(r.details[0]).toContain('frontend-kv-events-disabled.log:3');
    expect(r.fix).toContain(FIX_EVENTS);
    expect(r.fix).toContain('--no-router-kv-events');
  });

  it('passes when every agg worker publishes and the frontend log has no router diagnostic', async () => {
    const plan = routerPlan();
    const run = runOf(plan, { frontend: sample('worker-agg-ready.log'), 'agg-0': sample('worker-agg-ready.log'), 'agg-1': sample('worker-agg-ready.log') });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('pass');
    expect(r.evidence.publishers).toEqual([
      { name: 'agg-0', role: 'agg', enableKvCacheEvents: true, endpoint: 'tcp://*:20080' },
      { name: 'agg-1', role: 'agg', enableKvCacheEvents: true, endpoint: 'tcp://*:20081' },
    ]);
  });

  it('fails on kv_event_publisher_disabled, quoting the line and giving both fixes', async () => {
    const plan = routerPlan();
    const run = runOf(plan, { frontend: sample('frontend-kv-events-disabled.log'), 'agg-0': sample('worker-agg-ready.log') });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('kv_event_publisher_disabled');
    expect(r.details[0]).toMatch(/^frontend \(.*frontend-kv-events-disabled\.log:3\) \(x1\): .*KV-event publishing is disabled/);
    expect(r.fix).toContain(`--kv-events-config '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080",${FIX_EVENTS}}'`);
    expect(r.fix).toContain('--no-router-kv-events');
    expect(r.fix).toContain('agg-router-approx');
  });

  it('fails on the JSON-lines form of the diagnostic with --logs', async () => {
    const r = await check.run(fakeFacts({ logs: await pathLogs([sample('frontend-kv-events-disabled.jsonl')]) }, { recipe: routerRecipe(), plan: routerPlan() }));
    expect(r.status).toBe('fail');
    expect(r.details[0]).toContain('frontend-kv-events-disabled.jsonl:1');
  });

  it('fails when the run\'s recorded argv lacks enable_kv_cache_events (decode never needs it)', async () => {
    const plan = routerPlan();
    const agg1 = plan.processes.find((p) => p.name === 'agg-1')!;
    const argv = agg1.argv.filter((a, i, all) => a !== '--kv-events-config' && all[i - 1] !== '--kv-events-config');
    const run = runOf(plan, { frontend: sample('worker-agg-ready.log') }, { argv: { 'agg-1': argv } });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('fail');
    expect(r.details).toEqual(['agg-1: no --kv-events-config in its command line: it publishes no KV events']);
  });

  it('without logs still judges the plan\'s argv, else skips with how to get logs', async () => {
    const r = await check.run(fakeFacts({ logs: null }, { recipe: routerRecipe(), plan: routerPlan() }));
    expect(r.status).toBe('skip');
    expect(r.summary).toContain('dynamo-dev up');
    const plan = routerPlan();
    const p = plan.processes.find((x) => x.name === 'agg-0')!;
    p.argv = p.argv.map((a) => (a.startsWith('{"publisher"') ? '{"publisher":"zmq","enable_kv_cache_events":false}' : a));
    const bad = await check.run(fakeFacts({ logs: null }, { recipe: routerRecipe(), plan }));
    expect(bad.status).toBe('fail');
    expect(bad.details[0]).toContain('agg-0: --kv-events-config');
  });

  it('disaggregated: only the prefill worker must publish, decode never does', async () => {
    const { buildPlan } = await import('../../../src/plan/build.js');
    const recipe = recipeFrom({
      frontend: { routerMode: 'kv', kvEvents: true } as never,
      workers: [{ role: 'decode', gpuMemoryUtilization: 0.38 } as never, { role: 'prefill', gpuMemoryUtilization: 0.38 } as never],
    });
    const plan = buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
    const run = runOf(plan, { frontend: sample('worker-agg-ready.log'), 'prefill-0': sample('worker-agg-ready.log'), 'decode-0': sample('worker-agg-ready.log') });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe, plan }));
    expect(r.status).toBe('pass');
    expect((r.evidence.publishers as { name: string }[]).map((p) => p.name)).toEqual(['prefill-0']);
  });

  it('warns on kv_event_source_not_observed', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'dd-kvev-'));
    try {
      const f = join(dir, 'frontend.log');
      writeFileSync(f, '2026-10-07T05:12:50.704420Z  WARN dynamo_llm::kv_router::indexer::recovery::source_health: no KV events observed diagnostic_code="kv_event_source_not_observed"\n');
      const r = await check.run(fakeFacts({ logs: await pathLogs([f]) }, { recipe: routerRecipe(), plan: routerPlan() }));
      expect(r.status).toBe('warn');
      expect(r.details[0]).toContain('frontend.log:1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
