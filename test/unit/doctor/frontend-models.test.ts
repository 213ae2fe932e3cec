import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/frontend.models.js';
import { fakeFacts } from '../../helpers/facts.js';
import type { FrontendFacts, HttpProbe } from '../../../src/host/types.js';
import type { RunView } from '../../../src/doctor/types.js';

const URL = 'http://127.0.0.1:8000';
const probe = (path: string, body: unknown, status = 200, error: string | null = null): HttpProbe =>
  ({ url: `${URL}${path}`, ok: error === null && status < 400, status: error ? null : status, body, error });
const frontend = (health: HttpProbe, models: HttpProbe, ids: string[]): FrontendFacts => ({ url: URL, health, models, modelIds: ids });
const liveRun = (status: RunView['status'] = 'ready') =>
  ({ record: { id: 'r1', model: 'Qwen/Qwen3-0.6B' }, status, live: true, pids: [1], logsDir: '/x' }) as unknown as RunView;
const MODELS = { object: 'list', data: [{ id: 'Qwen/Qwen3-0.6B', object: 'model' }] };

describe('frontend.models', () => {
  it('skips without a live run', async () => {
    const r = await check.run(fakeFacts({ frontend: null }));
    expect(r).toMatchObject({ status: 'skip', summary: 'no live run' });
  });

  it('passes when /health is healthy and /v1/models lists the model', async () => {
    const r = await check.run(fakeFacts({
      run: liveRun(),
      frontend: frontend(probe('/health', { status: 'healthy', instances: [{}] }), probe('/v1/models', MODELS), ['Qwen/Qwen3-0.6B']),
    }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('lists Qwen/Qwen3-0.6B');
  });

  it('fails on the real "No endpoints available" answer, even with HTTP 200', async () => {
    const r = await check.run(fakeFacts({
      run: liveRun(),
      frontend: frontend(probe('/health', { status: 'unhealthy', message: 'No endpoints available', instances: [] }, 200),
        probe('/v1/models', { object: 'list', data: [] }), []),
    }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('/health says unhealthy: No endpoints available; no worker is registered with the frontend');
    expect(r.fix).toContain('kv.allocated');
  });

  it('fails when healthy but the model is not listed; warns while the run is still starting', async () => {
    const fe = frontend(probe('/health', { status: 'healthy' }), probe('/v1/models', { object: 'list', data: [{ id: 'other' }] }), ['other']);
    const r = await check.run(fakeFacts({ run: liveRun(), frontend: fe }));
    expect(r.status).toBe('fail');
    expect(r.details).toEqual(['listed: other']);
    expect((await check.run(fakeFacts({ run: liveRun('starting'), frontend: fe }))).status).toBe('warn');
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
