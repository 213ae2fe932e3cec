import { describe, expect, it } from 'vitest';
import check, { KV_EVENTS_FIX } from '../../../src/doctor/checks/kv.events.js';
import { NO_LOGS } from '../../../src/doctor/log-view.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { Plan } from '../../../src/plan/types.js';
import { recipeFrom } from '../../helpers/facts.js';
import { fakeFacts } from './facts-with-release.js';
import { routerPlan, routerRecipe, runOf } from './helpers.js';
import { finding, logSet } from './log-sets.js';

// kv.events as the user reads it: which worker publishes nothing and why, the router's own line
// quoted with where it is, and the evidence --json carries.
const SOURCE_FIX =
  'give each worker its own --kv-events-config endpoint port with "enable_kv_cache_events":true, stop leftovers (`dynamo-dev teardown --orphans`), and use a fresh discovery directory per run';
const DISABLED = 'the router reports kv_event_publisher_disabled: workers publish no KV events, routing ignores the cache (hits at random level)';
const NO_SOURCE = 'the router sees no (or conflicting) KV-event publishers (kv_event_source_not_observed / kv_event_source_ambiguous)';
const FE = '/runs/r/logs/frontend.log';
const disabledAt = (file = FE) => finding('dynamo.kv-events-disabled', file, 3, 'WARN kv_event_publisher_disabled: KV-event publishing is disabled', { count: 2 });
const missingAt = (file = FE) => finding('dynamo.kv-source-missing', file, 7, 'WARN diagnostic_code="kv_event_source_not_observed"');
const runFiles = () => [
  { path: FE, process: 'frontend', role: 'frontend' },
  { path: '/runs/r/logs/agg-0.log', process: 'agg-0', role: 'agg' },
  { path: '/runs/r/logs/agg-1.log', process: 'agg-1', role: 'agg' },
];
const PUBLISHERS = [
  { name: 'agg-0', role: 'agg', enableKvCacheEvents: true, endpoint: 'tcp://*:20080' },
  { name: 'agg-1', role: 'agg', enableKvCacheEvents: true, endpoint: 'tcp://*:20081' },
];
/** The plan with one worker's --kv-events-config replaced (null: removed). */
function withConfig(plan: Plan, name: string, value: string | null, form: 'split' | 'joined' = 'split'): Plan {
  const p = plan.processes.find((x) => x.name === name)!;
  const i = p.argv.indexOf('--kv-events-config');
  const head = p.argv.slice(0, i);
  p.argv = value === null ? head : form === 'split' ? [...head, '--kv-events-config', value] : [...head, `--kv-events-config=${value}`];
  return plan;
}

describe('kv.events: a KV router with events', () => {
  it('every worker publishing and a clean frontend log pass, with the publishers as evidence', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }, { recipe: routerRecipe(), plan: routerPlan() }));
    expect(r).toEqual({
      status: 'pass',
      summary: '2 workers publish KV events; no router diagnostic in /tmp/fe.log',
      details: [],
      fix: null,
      evidence: { routerMode: 'kv', kvEvents: true, publishers: PUBLISHERS, diagnostics: [], release: '1.6.1', diagnosticsLogged: true },
    });
  });

  it('one publishing worker is counted as one', async () => {
    const recipe = recipeFrom({ frontend: { routerMode: 'kv', kvEvents: true } as never });
    const plan = buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }, { recipe, plan }));
    expect(r.summary).toBe('1 worker publish KV events; no router diagnostic in /tmp/fe.log');
    const none = await check.run(fakeFacts({ logs: null }, { recipe, plan }));
    expect(none.summary).toBe(`${NO_LOGS} (the plan's 1 publishing worker enable KV events)`);
  });

  it('the router saying kv_event_publisher_disabled fails, quoting its line with the process and count', async () => {
    const plan = routerPlan();
    const run = runOf(plan, {});
    const logs = logSet('run', runFiles(), [disabledAt()]);
    const r = await check.run(fakeFacts({ run, logs }, { recipe: routerRecipe(), plan }));
    expect(r).toEqual({
      status: 'fail',
      summary: DISABLED,
      details: [`frontend (${FE}:3) (x2): WARN kv_event_publisher_disabled: KV-event publishing is disabled`],
      fix: KV_EVENTS_FIX,
      evidence: {
        routerMode: 'kv', kvEvents: true, publishers: PUBLISHERS,
        diagnostics: [{ code: 'dynamo.kv-events-disabled', count: 2, file: FE, line: 3, text: 'WARN kv_event_publisher_disabled: KV-event publishing is disabled', workers: [] }],
      },
    });
  });

  it('a worker started without the flag fails, naming it; the router line comes first when both show', async () => {
    const plan = withConfig(routerPlan(), 'agg-1', null);
    const run = runOf(plan, {});
    const clean = await check.run(fakeFacts({ run, logs: logSet('run', runFiles()) }, { recipe: routerRecipe(), plan }));
    expect(clean).toMatchObject({
      status: 'fail',
      summary: 'agg-1 publish no KV events to the KV router',
      details: ['agg-1: no --kv-events-config in its command line: it publishes no KV events'],
      fix: KV_EVENTS_FIX,
    });
    expect(clean.evidence.publishers).toEqual([PUBLISHERS[0], { name: 'agg-1', role: 'agg', enableKvCacheEvents: false, endpoint: null }]);
    const both = await check.run(fakeFacts({ run, logs: logSet('run', runFiles(), [disabledAt()]) }, { recipe: routerRecipe(), plan }));
    expect(both.summary).toBe(DISABLED);
    expect(both.details).toEqual([
      `frontend (${FE}:3) (x2): WARN kv_event_publisher_disabled: KV-event publishing is disabled`,
      'agg-1: no --kv-events-config in its command line: it publishes no KV events',
    ]);
  });

  it('a config without enable_kv_cache_events, one that is not JSON, and one that is an array are all named', async () => {
    let plan = withConfig(routerPlan(), 'agg-0', '{"publisher":"zmq","enable_kv_cache_events":"true"}', 'joined');
    plan = withConfig(plan, 'agg-1', '{publisher: zmq}');
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }, { recipe: routerRecipe(), plan }));
    expect(r.summary).toBe('agg-0, agg-1 publish no KV events to the KV router');
    expect(r.details).toEqual([
      'agg-0: --kv-events-config {"publisher":"zmq","enable_kv_cache_events":"true"} lacks "enable_kv_cache_events": true',
      'agg-1: --kv-events-config {publisher: zmq} lacks "enable_kv_cache_events": true',
    ]);
    const arr = withConfig(routerPlan(), 'agg-0', '[{"enable_kv_cache_events":true}]');
    const a = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }, { recipe: routerRecipe(), plan: arr }));
    expect(a.details).toEqual(['agg-0: --kv-events-config [{"enable_kv_cache_events":true}] lacks "enable_kv_cache_events": true']);
    const last = withConfig(routerPlan(), 'agg-0', '--enforce-eager');
    last.processes.find((x) => x.name === 'agg-0')!.argv.pop();
    const l = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }, { recipe: routerRecipe(), plan: last }));
    expect(l.details).toEqual(['agg-0: no --kv-events-config in its command line: it publishes no KV events']);
  });

  it("the argv the run really started wins over the plan's", async () => {
    const plan = routerPlan();
    const argv = withConfig(routerPlan(), 'agg-0', null).processes.find((x) => x.name === 'agg-0')!.argv;
    const run = runOf(plan, {}, { argv: { 'agg-0': argv } });
    const r = await check.run(fakeFacts({ run, logs: logSet('run', runFiles()) }, { recipe: routerRecipe(), plan }));
    expect(r.summary).toBe('agg-0 publish no KV events to the KV router');
    const paths = await check.run(fakeFacts({ run, logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }, { recipe: routerRecipe(), plan }));
    expect(paths.status).toBe('pass');
  });

  it('the mocker publishes its own events: no flag needed', async () => {
    const recipe = recipeFrom({ engine: 'mocker', frontend: { routerMode: 'kv', kvEvents: true } as never });
    const plan = buildPlan({ recipe, runDir: '/tmp/dd-run' });
    for (const p of plan.processes) p.argv = p.argv.filter((a) => !a.includes('kv-events'));
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }, { recipe, plan }));
    expect(r.status).toBe('pass');
  });

  it('the router seeing no publisher warns with its line and how to get distinct publishers', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }], [missingAt('/tmp/fe.log')]) }, { recipe: routerRecipe(), plan: routerPlan() }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: NO_SOURCE,
      details: ['/tmp/fe.log:7 (x1): WARN diagnostic_code="kv_event_source_not_observed"'],
      fix: SOURCE_FIX,
    });
  });
});

describe('kv.events: without logs to read', () => {
  it('no logs: the plan is still judged, a silent worker fails', async () => {
    const plan = withConfig(routerPlan(), 'agg-0', null);
    const r = await check.run(fakeFacts({ logs: null }, { recipe: routerRecipe(), plan }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'agg-0 would publish no KV events to the KV router',
      details: ['agg-0: no --kv-events-config in its command line: it publishes no KV events'],
    });
    expect(r.evidence).not.toHaveProperty('diagnostics');
  });

  it('no logs and a sound plan: a skip that says why and what the plan does', async () => {
    const r = await check.run(fakeFacts({ logs: null }, { recipe: routerRecipe(), plan: routerPlan() }));
    expect(r).toEqual({
      status: 'skip',
      summary: `${NO_LOGS} (the plan's 2 publishing workers enable KV events)`,
      details: [],
      fix: null,
      evidence: { routerMode: 'kv', kvEvents: true, publishers: PUBLISHERS },
    });
  });

  it("a run whose log files are gone is no evidence: skips naming the run", async () => {
    const plan = routerPlan();
    const r = await check.run(fakeFacts({ run: runOf(plan, {}), logs: logSet('run', runFiles(), [], { scanned: 0 }) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('skip');
    expect(r.summary).toBe("no log file of run 20261130-101500-agg-router is left to read (the plan's 2 publishing workers enable KV events)");
  });

  it('exactly one file scanned is evidence: judged, not skipped', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }], [], { scanned: 1 }) }, { recipe: routerRecipe(), plan: routerPlan() }));
    expect(r.status).toBe('pass');
  });
});

describe('kv.events: routers that use no events', () => {
  it('round-robin skips with its mode as evidence', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }));
    expect(r).toEqual({ status: 'skip', summary: 'router mode round-robin does not use KV events', details: [], fix: null, evidence: { routerMode: 'round-robin' } });
  });

  it('approximate mode skips, whether the plan or the frontend the run started says so', async () => {
    const approx = await check.run(fakeFacts({}, { recipe: routerRecipe(false), plan: routerPlan(false) }));
    expect(approx).toEqual({
      status: 'skip', summary: 'the KV router runs in approximate mode (--no-router-kv-events): no KV events needed', details: [], fix: null,
      evidence: { routerMode: 'kv', kvEvents: false },
    });
    for (const flag of ['--no-router-kv-events', '--no-kv-events']) {
      const plan = routerPlan();
      const fe = plan.processes.find((p) => p.role === 'frontend')!;
      const run = runOf(plan, {}, { argv: { frontend: [...fe.argv, flag] } });
      const r = await check.run(fakeFacts({ run, logs: logSet('run', runFiles()) }, { recipe: routerRecipe(), plan }));
      expect(r.summary, flag).toBe('the KV router runs in approximate mode (--no-router-kv-events): no KV events needed');
    }
  });

  it('a run whose frontend was started without events (older --no-kv-events), yet logs the diagnostic: fails, evidence says events off', async () => {
    const plan = routerPlan();
    const fe = plan.processes.find((p) => p.role === 'frontend')!;
    const run = runOf(plan, {}, { argv: { frontend: [...fe.argv, '--no-kv-events'] } });
    const r = await check.run(fakeFacts({ run, logs: logSet('run', runFiles(), [disabledAt()]) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('fail');
    expect(r.details[1]).toBe('the logs come from a KV router with events (the plan of test does not use one)');
    expect(r.evidence).toMatchObject({ routerMode: 'kv', kvEvents: false });
  });

  it('logs of a router that did expect events are judged even so: disabled fails, no source warns', async () => {
    const logs = logSet('paths', [{ path: '/tmp/fe.log' }], [disabledAt('/tmp/fe.log'), missingAt('/tmp/fe.log')]);
    const r = await check.run(fakeFacts({ logs }));
    expect(r).toEqual({
      status: 'fail',
      summary: DISABLED,
      details: [
        '/tmp/fe.log:3 (x2): WARN kv_event_publisher_disabled: KV-event publishing is disabled',
        'the logs come from a KV router with events (the plan of test does not use one)',
      ],
      fix: KV_EVENTS_FIX,
      evidence: {
        routerMode: 'round-robin', kvEvents: true,
        diagnostics: [
          { code: 'dynamo.kv-events-disabled', count: 2, file: '/tmp/fe.log', line: 3, text: 'WARN kv_event_publisher_disabled: KV-event publishing is disabled', workers: [] },
          { code: 'dynamo.kv-source-missing', count: 1, file: '/tmp/fe.log', line: 7, text: 'WARN diagnostic_code="kv_event_source_not_observed"', workers: [] },
        ],
      },
    });
    const w = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }], [missingAt('/tmp/fe.log')]) }, { recipe: routerRecipe(false), plan: routerPlan(false) }));
    expect(w).toMatchObject({
      status: 'warn',
      summary: NO_SOURCE,
      fix: SOURCE_FIX,
      details: ['/tmp/fe.log:7 (x1): WARN diagnostic_code="kv_event_source_not_observed"', 'the logs come from a KV router with events (the plan of test does not use one)'],
      evidence: { routerMode: 'kv', kvEvents: false },
    });
  });
});
