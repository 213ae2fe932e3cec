import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/frontend.models.js';
import { fakeFacts } from '../../helpers/facts.js';
import type { FrontendFacts, HttpProbe } from '../../../src/host/types.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { LostProcess } from '../../../src/run/losses.js';

// frontend.models on a run that lost a worker: the released 1.6.1 frontend keeps counting a
// SIGKILLed mocker for about 10 s (its file-discovery registration outlives it), so the count alone
// would pass "2 of 2" on a degraded run (seen on the real Dynamo: test/dynamo/worker-killed.test.ts).

const URL = 'http://127.0.0.1:8000';
const MODEL = 'Qwen/Qwen3-0.6B';
const probe = (path: string, body: unknown): HttpProbe => ({ url: `${URL}${path}`, ok: true, status: 200, body, error: null });
const ready = (workers: number) => ({
  model: MODEL, ready: workers > 0,
  namespaces: { dynamo: { ready: workers > 0, worker_types: { aggregated: { workers, needs: [] } }, present: ['aggregated'], missing_worker_types: [] } },
});
const fe = (workers: number): FrontendFacts => ({
  url: URL, health: probe('/health', { status: 'healthy', instances: [] }), models: probe('/v1/models', { object: 'list', data: [{ id: MODEL }] }),
  modelIds: [MODEL], modelReady: probe('/v1/models/m/ready', ready(workers)),
});
const lost = (name: string, role = 'agg'): LostProcess =>
  ({ name, role, how: 'gone', exitCode: null, signal: null, at: '2026-12-01T09:00:00.000Z', noticed: true, leftPids: [], diagnosis: null }) as LostProcess;
const run = (lostList: LostProcess[], workers = 2, live = true): RunView => {
  const processes = [{ name: 'frontend', role: 'frontend', argv: ['python3'] }, ...Array.from({ length: workers }, (_, i) => ({ name: `agg-${i}`, role: 'agg', argv: ['python3', '-m', 'dynamo.mocker'] }))];
  return { record: { id: 'r1', model: MODEL, processes, plan: { processes } }, status: lostList.length ? 'degraded' : 'ready', live, pids: [1], lost: lostList, logsDir: '/x' } as unknown as RunView;
};

describe('frontend.models when the run has lost a worker', () => {
  it('fails naming the lost worker while the frontend still counts it (stale registration)', async () => {
    const r = await check.run(fakeFacts({ run: run([lost('agg-1')]), frontend: fe(2) }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('agg-1 is gone; the frontend counts 2 of the 2 planned workers (it still counts what is gone until the registration expires), so requests run on fewer workers than the experiment assumes');
    expect(r.fix).toContain('dynamo-dev status --run r1');
    // The one lost worker comes back alone, as status offers it; the whole run is the other way.
    expect(r.fix).toBe('see how it ended (`dynamo-dev status --run r1`, `dynamo-dev diagnose`), then start it again alone: `dynamo-dev restart agg-1 --run r1`; or stop it (`dynamo-dev teardown --run r1`) and start it again with the same `dynamo-dev up` command');
    expect(r.evidence).toMatchObject({ lost: ['agg-1'], workers: { seen: 2, expected: 2 } });
  });

  it('fails naming it once the frontend has dropped it too, without the stale note', async () => {
    const r = await check.run(fakeFacts({ run: run([lost('agg-1')]), frontend: fe(1) }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('agg-1 is gone; the frontend counts 1 of the 2 planned workers, so requests run on fewer workers than the experiment assumes');
  });

  it('names every lost worker; a lost frontend is not a lost worker', async () => {
    const two = await check.run(fakeFacts({ run: run([lost('agg-0'), lost('agg-2')], 3), frontend: fe(2) }));
    expect(two.summary).toMatch(/^agg-0, agg-2 are gone; the frontend counts 2 of the 3 planned workers \(it still counts/);
    // Only the frontend lost (its answer came from elsewhere): the count decides, here a pass.
    const feOnly = await check.run(fakeFacts({ run: run([lost('frontend', 'frontend')]), frontend: fe(2) }));
    expect(feOnly.status).toBe('pass');
  });

  it('a run that is not live is judged by the count alone', async () => {
    const r = await check.run(fakeFacts({ run: run([lost('agg-1')], 2, false), frontend: fe(2) }));
    expect(r.status).toBe('pass');
  });
});
