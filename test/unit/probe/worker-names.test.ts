import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nameWorkers, ownWorkerIdInLog, workerEndpointsOf } from '../../../src/probe/worker-names.js';

// Real text: /health of the 1.6.1 frontend over two `python -m dynamo.mocker` workers (file
// discovery, TCP request plane), and lines of such a worker's log.
const health = readFileSync(new URL('../../fixtures/samples/http/health-1.6.1-two-mockers.json', import.meta.url), 'utf8');

describe('workerEndpointsOf', () => {
  it('reads each generate endpoint\'s exact id (from the transport hex) and its request-plane port', () => {
    expect(workerEndpointsOf(JSON.parse(health))).toEqual([
      { id: '2122886748942083121', port: 46591 },
      { id: '9010412375865254883', port: 44359 },
    ]);
  });
  it('without a TCP transport: the instance id when it is exact, no port; unsafe numbers and other endpoints are skipped', () => {
    expect(workerEndpointsOf({ instances: [
      { endpoint: 'generate', instance_id: 12345, transport: { nats_tcp: 'dynamo_backend.generate-3039' } },
      { endpoint: 'generate', instance_id: 2122886748942083121 },
      { endpoint: 'worker_kv_query_source_1', instance_id: 7, transport: { tcp: '10.0.0.1:4000/7/dynamo/backend/x' } },
    ] })).toEqual([{ id: '12345', port: null }]);
    expect(workerEndpointsOf(null)).toEqual([]);
    expect(workerEndpointsOf({ status: 'healthy' })).toEqual([]);
  });
});

describe('ownWorkerIdInLog', () => {
  const start = (id: string) => [
    `2026-12-05T17:09:52.385521Z  INFO dynamo_llm::fpm_publisher: FPM direct publisher started worker_id=${id}`,
    `2026-12-05T17:09:52.385600Z  INFO dynamo_llm::kv_router::publisher: Initializing KvEventPublisher for worker ${id} on serving endpoint dynamo/backend/generate kv_state_endpoint=dynamo/backend/generate`,
  ].join('\n');
  it('the id a worker names as its own; after a restart the newer one', () => {
    expect(ownWorkerIdInLog(start('2122886748942083121'))).toBe('2122886748942083121');
    expect(ownWorkerIdInLog(`${start('1')}\n--- dynamo-dev restart x: agg-0 stopped and started again (restart 1) ---\n${start('2')}`)).toBe('2');
    expect(ownWorkerIdInLog('2026-12-05T17:09:52.406202Z  INFO handle_payload: request received instance_id=2122886748942083121')).toBeNull();
  });
});

describe('nameWorkers', () => {
  const eps = [{ id: '1', port: 100 }, { id: '2', port: 200 }];
  it('by the port holder first, then the log; a process claimed twice names neither', () => {
    expect(nameWorkers(eps, new Map([[100, 'agg-0'], [200, 'agg-1']]), new Map())).toEqual(new Map([['1', 'agg-0'], ['2', 'agg-1']]));
    expect(nameWorkers(eps, new Map([[100, 'agg-0']]), new Map([['agg-0', '1'], ['agg-1', '2']]))).toEqual(new Map([['1', 'agg-0'], ['2', 'agg-1']]));
    expect(nameWorkers(eps, new Map([[100, 'agg-0'], [200, 'agg-0']]), new Map())).toEqual(new Map());
    expect(nameWorkers(eps, new Map(), new Map([['agg-0', null]]))).toEqual(new Map());
  });
});
