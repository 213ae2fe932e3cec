import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kvEventsApplied } from '../../../src/bench/kv-events-metric.js';
import { SAMPLES } from '../../helpers/cli.js';

// The router's count of KV events applied to its index, on the real 1.6.1 frontend's /metrics
// (test/fixtures/samples/http/README.md says how each was captured).
const sample = (name: string) => readFileSync(join(SAMPLES, 'http', name), 'utf8');

describe('kvEventsApplied (frontend /metrics)', () => {
  it('a KV router that got events: the ok series summed, per worker', () => {
    const a = kvEventsApplied(sample('frontend-metrics-kv-1.6.1.txt'));
    expect(a).not.toBeNull();
    expect(a!.ok).toBe(1);
    expect(a!.rejected).toBe(0);
    expect(Object.values(a!.byWorker).filter((n) => n > 0)).toEqual([1]);
  });

  it('a KV router whose workers publish nothing: the counter is there, every series 0', () => {
    expect(kvEventsApplied(sample('frontend-metrics-kv-no-events-1.6.1.txt'))).toEqual({ ok: 0, rejected: 0, byWorker: expect.any(Object) });
  });

  it('round-robin has no such counter: null (unknown), never 0', () => {
    expect(kvEventsApplied(sample('frontend-metrics-round-robin-1.6.1.txt'))).toBeNull();
    expect(kvEventsApplied('')).toBeNull();
  });

  it('other statuses count as rejected; a longer metric name with the same start is not this one', () => {
    const text = [
      '# TYPE dynamo_component_kv_cache_events_applied counter',
      'dynamo_component_kv_cache_events_applied{event_type="stored",status="ok",worker_id="a"} 3',
      'dynamo_component_kv_cache_events_applied{event_type="removed",status="ok",worker_id="b"} 2',
      'dynamo_component_kv_cache_events_applied{event_type="stored",status="block_not_found",worker_id="a"} 4',
      'dynamo_component_kv_cache_events_applied_total{status="ok"} 99',
    ].join('\n');
    expect(kvEventsApplied(text)).toEqual({ ok: 5, rejected: 4, byWorker: { a: 3, b: 2 } });
  });
});
