import { describe, expect, it } from 'vitest';
import check, { plannedWorkers } from '../../../src/doctor/checks/frontend.models.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { FrontendFacts, HttpProbe } from '../../../src/host/types.js';
import { fakeFacts } from '../../helpers/facts.js';

// frontend.models as the user reads it: how many workers the frontend counts against the plan,
// where that number comes from, and the exact request it answered when it is wrong.
const URL = 'http://127.0.0.1:8000';
const MODEL = 'Qwen/Qwen3-0.6B';
// As probeFrontend asks it: the id encoded in the path (plan/model-ready.ts).
const READY_PATH = `/v1/models/${encodeURIComponent(MODEL)}/ready`;
const READY_URL = `${URL}${READY_PATH}`;
const REGISTER_FIX = 'check that every worker is alive and registered (`dynamo-dev status`, `dynamo-dev doctor --only kv.allocated,logs.errors`)';
const probe = (path: string, body: unknown, status = 200, error: string | null = null): HttpProbe =>
  ({ url: `${URL}${path}`, ok: error === null && status < 400, status: error ? null : status, body, error });
const fe = (health: unknown, ids: string[], modelReady: unknown = undefined, healthStatus = 200): FrontendFacts => ({
  url: URL, health: probe('/health', health, healthStatus), models: probe('/v1/models', { object: 'list', data: ids.map((id) => ({ id })) }), modelIds: ids,
  modelReady: modelReady === undefined ? null : probe(READY_PATH, modelReady),
});
const healthOf = (ids: number[], status = 'healthy') => ({
  status, instances: ids.map((id) => ({ component: 'backend', endpoint: 'generate', namespace: 'dynamo', instance_id: id })),
});
const readyOf = (workers: number, ready = workers > 0) => ({ model: MODEL, ready, namespaces: { dynamo: { worker_types: { aggregated: { workers } } } } });
function runOf(status: RunView['status'] = 'ready', workers = 2, live = true): RunView {
  const processes = [{ name: 'frontend', role: 'frontend', argv: ['python3'] }, ...Array.from({ length: workers }, (_, i) => ({ name: `agg-${i}`, role: 'agg', argv: ['python3'] }))];
  return { record: { id: 'r1', model: MODEL, processes, plan: { processes } }, status, live, pids: [1], lost: [], logsDir: '/x' } as unknown as RunView;
}

describe('frontend.models: every planned worker counted', () => {
  it('counted by the model readiness endpoint: passes, with the count and its source as evidence', async () => {
    const health = healthOf([11, 22]);
    const r = await check.run(fakeFacts({ run: runOf(), frontend: fe(health, [MODEL], readyOf(2)) }));
    expect(r).toEqual({
      status: 'pass',
      summary: `2 of 2 workers counted; ${URL}/v1/models lists ${MODEL}`,
      details: [],
      fix: null,
      evidence: {
        url: URL, model: MODEL, health, healthStatus: 200, modelIds: [MODEL], runId: 'r1',
        workers: { seen: 2, expected: 2, countedBy: 'model-ready', byType: { aggregated: 2 }, instances: ['11', '22'] },
        modelReady: readyOf(2),
      },
    });
  });

  it('without a live run to plan from, the workers are counted without a target, and the plan names the model', async () => {
    const one = await check.run(fakeFacts({ frontend: fe(healthOf([11]), ['Qwen/Qwen3-0.6B']) }));
    expect(one.summary).toBe(`1 worker counted; ${URL}/v1/models lists ${MODEL}`);
    expect(one.evidence).toMatchObject({ runId: null, workers: { seen: 1, expected: null, countedBy: 'health-instances', byType: null }, modelReady: null });
    const two = await check.run(fakeFacts({ run: runOf('stopped', 1, false), frontend: fe(healthOf([11, 22]), [MODEL]) }));
    expect(two.summary).toBe(`2 workers counted; ${URL}/v1/models lists ${MODEL}`);
    expect(two.evidence).toMatchObject({ runId: 'r1' });
  });
});

describe('frontend.models: the frontend is not serving', () => {
  it('no answer at all: fails with the error, the request, and where to look', async () => {
    const f: FrontendFacts = { url: URL, health: probe('/health', null, 0, 'connection refused'), models: probe('/v1/models', null, 0, 'connection refused'), modelIds: [] };
    const r = await check.run(fakeFacts({ run: runOf(), frontend: f }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: `frontend at ${URL} does not answer: connection refused`,
      fix: 'look at its log (`dynamo-dev logs frontend --run r1`); stop it (`dynamo-dev teardown --run r1`) and start it again with the same `dynamo-dev up` command',
      details: [`GET ${URL}/health: connection refused`],
    });
    const noRun = await check.run(fakeFacts({ frontend: f }));
    expect(noRun.fix).toBe('look at its log (`dynamo-dev logs frontend`); stop it (`dynamo-dev teardown`) and start it again with the same `dynamo-dev up` command');
  });

  it('/health failing while /v1/models answers is judged on what did answer', async () => {
    const f: FrontendFacts = { ...fe(null, [MODEL], readyOf(2)), health: probe('/health', null, 0, 'timed out') };
    const r = await check.run(fakeFacts({ run: runOf(), frontend: f }));
    expect(r.status).toBe('pass');
  });

  it('not_ready without a message fails quoting the body; while starting it only warns', async () => {
    const body = { status: 'not_ready' };
    const r = await check.run(fakeFacts({ run: runOf(), frontend: fe(body, [], undefined, 503) }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: '/health says not_ready: the frontend has not finished its initial discovery',
      fix: 'look at its log (`dynamo-dev logs frontend --run r1`) for a discovery error; if it stays so, stop it (`dynamo-dev teardown --run r1`) and start it again with the same `dynamo-dev up` command',
      details: [`GET ${URL}/health -> {"status":"not_ready"}`],
    });
    const starting = await check.run(fakeFacts({ run: runOf('starting'), frontend: fe(body, [], undefined, 503) }));
    expect(starting).toMatchObject({ status: 'warn', summary: '/health says not_ready: the frontend has not finished its initial discovery (the run is still starting)', details: [] });
  });

  it('shutting_down says the frontend is stopping', async () => {
    const r = await check.run(fakeFacts({ frontend: fe({ status: 'shutting_down', message: 'bye' }, [MODEL]) }));
    expect(r.summary).toBe('/health says shutting_down: the frontend is stopping');
    expect(r.fix).toBe('look at its log (`dynamo-dev logs frontend`) for a discovery error; if it stays so, stop it (`dynamo-dev teardown`) and start it again with the same `dynamo-dev up` command');
  });

  it('a model not ready counts no worker, quoting the readiness answer', async () => {
    const r = await check.run(fakeFacts({ run: runOf(), frontend: fe(healthOf([11, 22]), [MODEL], readyOf(2, false)) }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'the frontend counts no worker of the 2 planned: no worker is registered with it',
      fix: REGISTER_FIX,
      details: [`GET ${READY_URL} -> ${JSON.stringify(readyOf(2, false))}`],
    });
  });

  it('no worker and no plan to compare: says so without a count; an unhealthy word without a message is quoted', async () => {
    const r = await check.run(fakeFacts({ frontend: fe(healthOf([], 'unhealthy'), []) }));
    expect(r.summary).toBe('/health says unhealthy; the frontend counts no worker: no worker is registered with it');
    expect(r.details).toEqual([`GET ${URL}/health -> {"status":"unhealthy","instances":[]}`]);
    const starting = await check.run(fakeFacts({ run: runOf('starting'), frontend: fe(healthOf([]), []) }));
    expect(starting).toMatchObject({ status: 'warn', summary: 'the frontend counts no worker of the 2 planned: no worker is registered with it (the run is still starting)', details: [] });
  });
});

describe('frontend.models: odd /health bodies', () => {
  it('a status or message that is not text is not quoted as one', async () => {
    const r = await check.run(fakeFacts({ frontend: fe({ status: { code: 503 }, message: { detail: 'x' }, instances: [] }, []) }));
    expect(r.summary).toBe('the frontend counts no worker: no worker is registered with it');
    const m = await check.run(fakeFacts({ frontend: fe({ status: 'unhealthy', message: 42, instances: [] }, []) }));
    expect(m.summary).toBe('/health says unhealthy; the frontend counts no worker: no worker is registered with it');
  });

  it('a plain-text or empty /health answer counts no worker and is quoted as it came', async () => {
    const r = await check.run(fakeFacts({ frontend: fe('OK', []) }));
    expect(r.summary).toBe('the frontend counts no worker: no worker is registered with it');
    expect(r.details).toEqual([`GET ${URL}/health -> "OK"`]);
  });
});

describe('frontend.models: too few, too many, not listed', () => {
  it('one missing: fails with the count, its source and how to find the process that ended', async () => {
    const r = await check.run(fakeFacts({ run: runOf('ready', 3), frontend: fe(healthOf([11, 22]), [MODEL]) }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'the frontend counts 2 of the 3 planned workers: 1 is missing, so requests run on fewer workers than the experiment assumes',
      fix: 'see which process ended (`dynamo-dev status --run r1`, `dynamo-dev diagnose`), then stop it (`dynamo-dev teardown --run r1`) and start it again with the same `dynamo-dev up` command',
      details: [`counted from ${URL}/health`],
    });
    const starting = await check.run(fakeFacts({ run: runOf('starting', 3), frontend: fe(healthOf([11]), [MODEL], readyOf(1)) }));
    expect(starting).toMatchObject({
      status: 'warn',
      summary: 'the frontend counts 1 of the 3 planned workers: 2 are missing, so requests run on fewer workers than the experiment assumes (the run is still starting)',
      details: [`counted from ${READY_URL}`],
    });
  });

  it('more workers than planned warn that others share the discovery', async () => {
    const r = await check.run(fakeFacts({ run: runOf('ready', 1), frontend: fe(healthOf([11, 22]), [MODEL], readyOf(2)) }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: "the frontend counts 2 workers, the run planned 1: others registered in the same discovery and may take this run's requests",
      fix: 'use file discovery (a fresh directory per run) or stop the other workers (`dynamo-dev doctor --only procs.leftover`)',
      details: [`counted from ${READY_URL}`],
    });
  });

  it('workers counted but the model not listed: fails listing what is served, or "nothing"', async () => {
    const r = await check.run(fakeFacts({ run: runOf('ready', 1), frontend: fe(healthOf([11]), []) }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: `the frontend counts 1 worker but /v1/models does not list ${MODEL}`,
      fix: `wait a few seconds after the workers are ready (\`dynamo-dev up\` does), or check that the workers serve --model ${MODEL}`,
      details: ['listed: nothing'],
    });
    const two = await check.run(fakeFacts({ run: runOf('starting'), frontend: fe(healthOf([11, 22]), ['a', 'b']) }));
    expect(two).toMatchObject({ status: 'warn', summary: `the frontend counts 2 workers but /v1/models does not list ${MODEL}`, details: ['listed: a, b'] });
  });
});

describe('plannedWorkers', () => {
  const rec = (argv: string[], o: { plan?: boolean } = {}) => {
    const processes = [{ name: 'frontend', role: 'frontend', argv: ['python3'] }, { name: 'agg-0', role: 'agg', argv }];
    return (o.plan === false ? { processes } : { processes: [], plan: { processes } }) as never;
  };
  it('counts each worker once, a mocker with --num-workers N (either form) N times', () => {
    expect(plannedWorkers(rec(['python3']))).toBe(1);
    expect(plannedWorkers(rec(['python3', '--num-workers=4']))).toBe(4);
    expect(plannedWorkers(rec(['python3', '--num-workers', '3'], { plan: false }))).toBe(3);
  });
  it('a --num-workers of 0, a fraction or a word counts as one worker', () => {
    for (const v of ['0', '1.5', 'many', '-2']) expect(plannedWorkers(rec(['python3', '--num-workers', v])), v).toBe(1);
  });
  it('a record without processes has nothing to count', () => {
    expect(plannedWorkers({ processes: [] } as never)).toBeNull();
    expect(plannedWorkers({} as never)).toBeNull();
    expect(plannedWorkers({ processes: [{ name: 'agg-0', role: 'agg' }] } as never)).toBe(1);
  });
});
