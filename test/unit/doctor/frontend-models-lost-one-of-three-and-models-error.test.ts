import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/frontend.models.js';
import { fakeFacts } from '../../helpers/facts.js';
import type { FrontendFacts, HttpProbe } from '../../../src/host/types.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { LostProcess } from '../../../src/run/losses.js';

// frontend.models: the "still counts what is gone" note is only said when the frontend's count is
// above what the live workers could register; the lost-worker failure says which request counted;
// a frontend whose /health answers is never called silent because /v1/models alone failed.
const URL = 'http://127.0.0.1:8000';
const MODEL = 'Qwen/Qwen3-0.6B';
const READY_URL = `${URL}/v1/models/m/ready`;
const probe = (path: string, body: unknown, error: string | null = null): HttpProbe =>
  ({ url: `${URL}${path}`, ok: error === null, status: error ? null : 200, body, error });
const ready = (workers: number) => ({ model: MODEL, ready: workers > 0, namespaces: { dynamo: { worker_types: { aggregated: { workers } } } } });
const fe = (workers: number, modelsError: string | null = null): FrontendFacts => ({
  url: URL, health: probe('/health', { status: 'healthy', instances: [] }),
  models: probe('/v1/models', modelsError ? null : { object: 'list', data: [{ id: MODEL }] }, modelsError),
  modelIds: modelsError ? [] : [MODEL], modelReady: probe('/v1/models/m/ready', ready(workers)),
});
const lost = (name: string): LostProcess =>
  ({ name, role: 'agg', how: 'gone', exitCode: null, signal: null, at: '2026-12-01T09:00:00.000Z', noticed: true, leftPids: [], diagnosis: null }) as LostProcess;
const run = (lostList: LostProcess[], workers: number): RunView => {
  const processes = [{ name: 'frontend', role: 'frontend', argv: ['python3'] }, ...Array.from({ length: workers }, (_, i) => ({ name: `agg-${i}`, role: 'agg', argv: ['python3', '-m', 'dynamo.mocker'] }))];
  return { record: { id: 'r1', model: MODEL, processes, plan: { processes } }, status: lostList.length ? 'degraded' : 'ready', live: true, pids: [1], lost: lostList, logsDir: '/x' } as unknown as RunView;
};

describe('frontend.models: one of three workers lost', () => {
  it('the frontend counting the two left: no stale-registration note, and the request that counted', async () => {
    const r = await check.run(fakeFacts({ run: run([lost('agg-1')], 3), frontend: fe(2) }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('agg-1 is gone; the frontend counts 2 of the 3 planned workers, so requests run on fewer workers than the experiment assumes');
    expect(r.details).toEqual([`counted from ${READY_URL}`]);
  });

  it('the frontend still counting all three: the stale-registration note', async () => {
    const r = await check.run(fakeFacts({ run: run([lost('agg-1')], 3), frontend: fe(3) }));
    expect(r.summary).toBe('agg-1 is gone; the frontend counts 3 of the 3 planned workers (it still counts what is gone until the registration expires), so requests run on fewer workers than the experiment assumes');
  });
});

describe('frontend.models: /health answers, /v1/models does not', () => {
  it('is not "does not answer" (the frontend is up) nor "does not list" (the list was never read): the request failed, with its error', async () => {
    const r = await check.run(fakeFacts({ run: run([], 2), frontend: fe(2, 'connect ECONNRESET 127.0.0.1:8000') }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('the frontend counts 2 workers but GET /v1/models failed: connect ECONNRESET 127.0.0.1:8000');
    expect(r.details).toEqual([`GET ${URL}/v1/models: connect ECONNRESET 127.0.0.1:8000`]);
    expect(r.fix).toBe('look at its log (`dynamo-dev logs frontend --run r1`); if it stays so, stop it (`dynamo-dev teardown --run r1`) and start it again with the same `dynamo-dev up` command');
    expect(r.summary).not.toContain('does not answer');
    expect(r.summary).not.toContain('does not list');
  });
});
