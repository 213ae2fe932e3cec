import { describe, expect, it } from 'vitest';
import check, { plannedWorkers } from '../../../src/doctor/checks/frontend.models.js';
import { fakeFacts } from '../../helpers/facts.js';
import type { FrontendFacts, HttpProbe } from '../../../src/host/types.js';
import type { RunView } from '../../../src/doctor/types.js';

const URL = 'http://127.0.0.1:8000';
const MODEL = 'Qwen/Qwen3-0.6B';
const probe = (path: string, body: unknown, status = 200, error: string | null = null): HttpProbe =>
  ({ url: `${URL}${path}`, ok: error === null && status < 400, status: error ? null : status, body, error });
const frontend = (health: HttpProbe, models: HttpProbe, ids: string[], modelReady: HttpProbe | null = null): FrontendFacts =>
  ({ url: URL, health, models, modelIds: ids, modelReady });
const proc = (name: string, role: string, argv: string[] = ['python3']) => ({ name, role, argv });
/** A live run of a frontend and `workers` planned workers. */
const liveRun = (status: RunView['status'] = 'ready', workers = 2, argv: string[] = ['python3', '-m', 'dynamo.mocker']) => {
  const processes = [proc('frontend', 'frontend'), ...Array.from({ length: workers }, (_, i) => proc(`agg-${i}`, 'agg', argv))];
  return { record: { id: 'r1', model: MODEL, processes, plan: { processes } }, status, live: true, pids: [1], logsDir: '/x' } as unknown as RunView;
};
const MODELS = { object: 'list', data: [{ id: MODEL, object: 'model' }] };
/** The real 1.6.1 /health body: two instances per worker (generate and a KV query endpoint). */
const health = (ids: number[]) => ({
  status: 'healthy',
  endpoints: ids.length ? ['dyn://dynamo.backend.generate', 'dyn://dynamo.backend.worker_kv_query_source_1'] : [],
  instances: ids.flatMap((id) => [
    { component: 'backend', endpoint: 'generate', namespace: 'dynamo', instance_id: id, transport: { tcp: `h:1/${id}` } },
    { component: 'backend', endpoint: `worker_kv_query_source_${id}`, namespace: 'dynamo', instance_id: id, transport: { tcp: `h:1/${id}` } },
  ]),
});
/** The real 1.6.1 /v1/models/<model>/ready body. */
const ready = (workers: number) => ({
  model: MODEL, ready: workers > 0,
  namespaces: { dynamo: { ready: workers > 0, worker_types: { aggregated: { workers, needs: [] } }, present: ['aggregated'], missing_worker_types: [] } },
});

describe('frontend.models', () => {
  it('skips without a live run', async () => {
    const r = await check.run(fakeFacts({ frontend: null }));
    expect(r).toMatchObject({ status: 'skip', summary: 'no live run' });
  });

  it('passes when the frontend counts every planned worker (its /ready) and lists the model', async () => {
    const r = await check.run(fakeFacts({
      run: liveRun(),
      frontend: frontend(probe('/health', health([11, 22])), probe('/v1/models', MODELS), [MODEL], probe('/v1/models/Qwen%2FQwen3-0.6B/ready', ready(2))),
    }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe(`2 of 2 workers counted; ${URL}/v1/models lists ${MODEL}`);
    expect(r.evidence).toMatchObject({ workers: { seen: 2, expected: 2, countedBy: 'model-ready', byType: { aggregated: 2 } } });
  });

  it('without /ready (before 1.6, or a local-folder id) counts the generate instances of /health, not its other endpoints', async () => {
    const r = await check.run(fakeFacts({ run: liveRun(), frontend: frontend(probe('/health', health([11, 22])), probe('/v1/models', MODELS), [MODEL]) }));
    expect(r.status).toBe('pass');
    expect(r.evidence).toMatchObject({ workers: { seen: 2, expected: 2, countedBy: 'health-instances' } });
    const old404 = frontend(probe('/health', health([11, 22])), probe('/v1/models', MODELS), [MODEL], probe('/v1/models/x/ready', { message: 'Model not found' }, 404));
    expect((await check.run(fakeFacts({ run: liveRun(), frontend: old404 }))).status).toBe('pass');
  });

  it('a live run that lost a worker fails, naming how many are missing ("healthy" says nothing about workers)', async () => {
    const byReady = await check.run(fakeFacts({
      run: liveRun('ready', 2),
      frontend: frontend(probe('/health', health([11])), probe('/v1/models', MODELS), [MODEL], probe('/v1/models/m/ready', ready(1))),
    }));
    expect(byReady.status).toBe('fail');
    expect(byReady.summary).toBe('the frontend counts 1 of the 2 planned workers: 1 is missing, so requests run on fewer workers than the experiment assumes');
    expect(byReady.fix).toContain('dynamo-dev status --run r1');
    const byHealth = await check.run(fakeFacts({ run: liveRun('ready', 3), frontend: frontend(probe('/health', health([11])), probe('/v1/models', MODELS), [MODEL]) }));
    expect(byHealth.summary).toMatch(/^the frontend counts 1 of the 3 planned workers: 2 are missing/);
    // Exactly enough passes: 3 of 3.
    const all = await check.run(fakeFacts({ run: liveRun('ready', 3), frontend: frontend(probe('/health', health([11, 22, 33])), probe('/v1/models', MODELS), [MODEL]) }));
    expect(all.status).toBe('pass');
  });

  it('a mocker with --num-workers N registers N workers', () => {
    expect(plannedWorkers(liveRun('ready', 2, ['python3', '-m', 'dynamo.mocker', '--num-workers', '3']).record)).toBe(6);
    expect(plannedWorkers(liveRun('ready', 2).record)).toBe(2);
  });

  it('a healthy frontend with no worker (1.5+) fails; while the run starts it warns', async () => {
    const fe = frontend(probe('/health', health([])), probe('/v1/models', { object: 'list', data: [] }), []);
    const r = await check.run(fakeFacts({ run: liveRun(), frontend: fe }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('the frontend counts no worker of the 2 planned: no worker is registered with it');
    expect(r.fix).toContain('kv.allocated');
    expect((await check.run(fakeFacts({ run: liveRun('starting'), frontend: fe }))).status).toBe('warn');
  });

  it('fails on the old "No endpoints available" answer, even with HTTP 200 (up to 0.7)', async () => {
    const r = await check.run(fakeFacts({
      run: liveRun(),
      frontend: frontend(probe('/health', { status: 'unhealthy', message: 'No endpoints available', instances: [] }, 200), probe('/v1/models', { object: 'list', data: [] }), []),
    }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('/health says unhealthy: No endpoints available; the frontend counts no worker of the 2 planned: no worker is registered with it');
  });

  it('503 not_ready: the frontend has not finished its initial discovery (1.5+)', async () => {
    const body = { status: 'not_ready', message: 'Initial model discovery in progress', endpoints: [], instances: [] };
    const r = await check.run(fakeFacts({ run: liveRun(), frontend: frontend(probe('/health', body, 503), probe('/v1/models', { object: 'list', data: [] }, 503), []) }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('/health says not_ready: Initial model discovery in progress: the frontend has not finished its initial discovery');
  });

  it('fails when workers are counted but the model is not listed; warns while the run is still starting', async () => {
    const fe = frontend(probe('/health', health([11, 22])), probe('/v1/models', { object: 'list', data: [{ id: 'other' }] }), ['other']);
    const r = await check.run(fakeFacts({ run: liveRun(), frontend: fe }));
    expect(r.status).toBe('fail');
    expect(r.details).toEqual(['listed: other']);
    expect((await check.run(fakeFacts({ run: liveRun('starting'), frontend: fe }))).status).toBe('warn');
  });

  it('warns when the frontend counts more workers than the run planned (another deployment in the same discovery)', async () => {
    const r = await check.run(fakeFacts({ run: liveRun('ready', 1), frontend: frontend(probe('/health', health([11, 22])), probe('/v1/models', MODELS), [MODEL]) }));
    expect(r.status).toBe('warn');
    expect(r.summary).toMatch(/^the frontend counts 2 workers, the run planned 1/);
  });

  it('fails when the frontend does not answer at all', async () => {
    const r = await check.run(fakeFacts({
      run: liveRun(),
      frontend: frontend(probe('/health', null, 0, 'connection refused (nothing listens on that port)'), probe('/v1/models', null, 0, 'connection refused'), []),
    }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('does not answer');
  });
});
