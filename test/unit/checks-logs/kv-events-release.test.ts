import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/kv.events.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { Plan } from '../../../src/plan/types.js';
import { fakeFacts, pythonWith } from './facts-with-release.js';
import { pathLogs, routerRecipe, runLogs, runOf, sample } from './helpers.js';

// kv.events on both sides of the release that first logs kv_event_publisher_disabled (1.4.0,
// dynamo-releases.ts kvEventDiagnostics): before it, a quiet router log is no evidence, so no pass.

const planFor = (version: string | null, kvEvents = true): Plan =>
  buildPlan({ recipe: routerRecipe(kvEvents), runDir: '/tmp/dd-run', gpuTotalMiB: 8188, dynamoVersion: version });
const quiet = { frontend: sample('worker-agg-ready.log'), 'agg-0': sample('worker-agg-ready.log'), 'agg-1': sample('worker-agg-ready.log') };

describe('kv.events and the run\'s Dynamo release', () => {
  it('a run planned for 1.3.1 with a quiet router log: warn, naming the release, what its logs cannot show, and probe', async () => {
    const plan = planFor('1.3.1');
    const run = runOf(plan, quiet);
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('warn');
    expect(r.summary).toBe('Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do): run 20261130-101500-agg-router cannot show whether the KV router gets KV events (the command lines of its 2 workers enable them)');
    expect(r.fix).toMatch(/^check routing with `dynamo-dev probe`.*Dynamo 1\.4\.0 or newer/);
    expect(r.evidence).toMatchObject({ release: '1.3.1', diagnosticsLogged: false });
  });

  it('a run planned for 1.4.0 (the first that logs it): pass on the same log', async () => {
    const plan = planFor('1.4.0');
    const run = runOf(plan, quiet);
    // The installed Dynamo does not matter for a run whose plan read its own.
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run), python: pythonWith('1.3.1') }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('pass');
    expect(r.details).toEqual([]);
    expect(r.evidence).toMatchObject({ release: '1.4.0', diagnosticsLogged: true });
  });

  it('--logs: judged by the Dynamo installed now (1.3.1 warns, 1.4.0 passes); none readable: pass, saying older releases would not log it', async () => {
    const plan = planFor(null);
    const logs = await pathLogs([sample('worker-agg-ready.log')]);
    const old = await check.run(fakeFacts({ logs, python: pythonWith('1.3.1') }, { recipe: routerRecipe(), plan }));
    expect(old.status).toBe('warn');
    expect(old.summary).toMatch(/^Dynamo 1\.3\.1 does not log kv_event_publisher_disabled \(1\.4\.0 and newer do\): \S+worker-agg-ready\.log cannot show/);
    const now = await check.run(fakeFacts({ logs, python: pythonWith('1.4.0') }, { recipe: routerRecipe(), plan }));
    expect(now.status).toBe('pass');
    const none = await check.run(fakeFacts({ logs, python: { interpreter: 'python3', ok: false, error: 'not found', pythonVersion: null, torchCuda: null, modules: {} } }, { recipe: routerRecipe(), plan }));
    expect(none.status).toBe('pass');
    expect(none.details).toEqual(['the Dynamo release of these logs is unknown: releases before 1.4.0 log no kv_event_publisher_disabled, so for them no diagnostic proves nothing']);
    expect(none.evidence).toMatchObject({ release: null, diagnosticsLogged: null });
  });

  it('what 1.3.1 can show still counts: a worker whose command line publishes nothing fails; an approximate router skips', async () => {
    const plan = planFor('1.3.1');
    const agg1 = plan.processes.find((p) => p.name === 'agg-1')!;
    const argv = agg1.argv.filter((a, i, all) => a !== '--kv-events-config' && all[i - 1] !== '--kv-events-config');
    const run = runOf(plan, quiet, { argv: { 'agg-1': argv } });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('agg-1 publish no KV events to the KV router');
    const approx = planFor('1.3.1', false);
    expect((await check.run(fakeFacts({}, { recipe: routerRecipe(false), plan: approx }))).status).toBe('skip');
  });
});
