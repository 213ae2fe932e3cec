import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readRunFacts } from '../../../src/run/bench-facts.js';
import type { Plan } from '../../../src/plan/types.js';
import type { Recipe } from '../../../src/recipe/schema.js';

// run/bench-facts.ts readRunFacts (issue 30): what the gates of a bench variant are given from its
// run. doctor's checks and the run's reads (logs, record, liveness) are fakes here (doctor/judge is
// tested on its own); what is under test is what readRunFacts makes of them: the lock waits found in
// the logs (by the process's name, only the lock codes) and those the supervisor recorded (who held
// the lock), the processes lost with how they ended, the run's liveness, and the frontend's KV event
// counter read from its own /metrics (an in-process server on a port the OS picked).
const world = vi.hoisted(() => ({ logs: null as unknown, run: null as unknown, outcomes: [] as unknown[] }));
vi.mock('../../../src/doctor/judge.js', () => ({
  selectChecks: (o: unknown) => o,
  runChecks: async () => world.outcomes,
  createFacts: () => ({ logs: async () => world.logs, run: async () => world.run }),
}));

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  world.logs = null;
  world.run = null;
  world.outcomes = [];
});

async function metricsServer(text: string): Promise<number> {
  const srv = createServer((req, res) => {
    if (req.url === '/metrics') res.end(text);
    else res.writeHead(404).end();
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return (srv.address() as AddressInfo).port;
}

const planWith = (http: number | undefined) => ({
  recipe: 'mocker', engine: 'mocker', model: 'M', router: { mode: 'kv', kvEvents: true },
  processes: [
    { name: 'agg-0', role: 'agg', argv: [], ports: { http: 1 } },
    { name: 'frontend', role: 'frontend', argv: [], ports: http === undefined ? {} : { http } },
  ],
}) as unknown as Plan;

const input = (plan: Plan) => ({ env: {}, stateDir: '/nonexistent', runId: 'r1', recipe: {} as Recipe, plan, python: 'python3', timeoutMs: 2000 });

describe('readRunFacts', () => {
  it('lock waits: the logs\' lock findings by process name (other findings left out), then each wait the supervisor recorded, with its holder', async () => {
    world.outcomes = [{ id: 'kv.events', status: 'pass', summary: '1 worker publishes', evidence: { n: 1 } }];
    world.logs = {
      files: [{ path: '/l/agg-0.log', process: 'agg-0' }, { path: '/l/odd.log', process: null }],
      scan: { findings: [
        { code: 'hf.lock-wait', count: 2, file: '/l/agg-0.log', line: 7, text: 'waiting for lock' },
        { code: 'hf.lock-failed', count: 1, file: '/l/odd.log', line: 3, text: 'lock failed' },
        { code: 'cuda.oom', count: 1, file: '/l/agg-0.log', line: 9, text: 'CUDA out of memory' },
      ] },
    };
    world.run = {
      live: true,
      lost: [],
      record: { processes: [
        { name: 'agg-0', lockWait: { lockPath: '/hf/a.lock', holderPid: 4242, holderCmd: 'python3 -m x' } },
        { name: 'agg-1', lockWait: { lockPath: '/hf/b.lock', holderPid: 4243, holderCmd: null } },
        { name: 'agg-2', lockWait: { lockPath: '/hf/c.lock', holderPid: null, holderCmd: null } },
        { name: 'frontend', lockWait: null },
      ] },
    };
    const f = await readRunFacts(input(planWith(undefined)));
    expect(f.checks).toEqual({ 'kv.events': { status: 'pass', summary: '1 worker publishes', evidence: { n: 1 } } });
    expect(f.lockWaits).toEqual([
      { code: 'hf.lock-wait', count: 2, file: 'agg-0', line: 7, text: 'waiting for lock' },
      { code: 'hf.lock-failed', count: 1, file: '/l/odd.log', line: 3, text: 'lock failed' },
      { code: 'hf.lock-wait', count: 1, file: 'agg-0', line: 0, text: 'agg-0 waited on /hf/a.lock held by pid 4242 (python3 -m x)' },
      { code: 'hf.lock-wait', count: 1, file: 'agg-1', line: 0, text: 'agg-1 waited on /hf/b.lock held by pid 4243' },
      { code: 'hf.lock-wait', count: 1, file: 'agg-2', line: 0, text: 'agg-2 waited on /hf/c.lock' },
    ]);
    expect(f.live).toBe(true);
    // No frontend port: no /metrics read, no counter.
    expect(f.kvEventsApplied).toBeNull();
  });

  it('the processes lost, said as a person reads them, with when (null when unknown); a run no longer live says so', async () => {
    world.run = {
      live: false,
      lost: [
        { name: 'agg-1', how: 'killed', exitCode: null, signal: 'SIGKILL', at: '2026-12-07T21:00:00.000Z' },
        { name: 'agg-0', how: 'never-started', exitCode: null, signal: null, at: null },
      ],
      record: { processes: [] },
    };
    const f = await readRunFacts(input(planWith(undefined)));
    expect(f.lost).toEqual([
      { name: 'agg-1', how: expect.stringContaining('SIGKILL'), at: '2026-12-07T21:00:00.000Z' },
      { name: 'agg-0', how: 'never started', at: null },
    ]);
    expect(f.live).toBe(false);
    expect(f.lockWaits).toEqual([]);
  });

  it('no run found and no logs: nothing lost, no lock wait, not live', async () => {
    const f = await readRunFacts(input(planWith(undefined)));
    expect(f).toMatchObject({ checks: {}, lockWaits: [], lost: [], live: false, kvEventsApplied: null });
  });

  it('the KV event counter is read from the frontend\'s own port, not another process\'s', async () => {
    const port = await metricsServer([
      '# TYPE dynamo_component_kv_cache_events_applied counter',
      'dynamo_component_kv_cache_events_applied{status="ok",worker_id="w1"} 5',
      'dynamo_component_kv_cache_events_applied{status="block_not_found",worker_id="w1"} 2',
      '',
    ].join('\n'));
    const f = await readRunFacts(input(planWith(port)));
    expect(f.kvEventsApplied).toEqual({ ok: 5, rejected: 2, byWorker: { w1: 5 } });
  });
});
