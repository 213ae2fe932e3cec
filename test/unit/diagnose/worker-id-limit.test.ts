import { describe, expect, it } from 'vitest';
import { scanText } from '../../../src/diagnose/scanner.js';

// kv.events names the workers a router diagnostic is about from the ids the logs announce. A
// hostile or looping log could announce thousands: 32 ids per file and per finding are kept
// (enough for any one-GPU run), the first ones, and exactly 32 are all kept.
// Line shapes as ai-dynamo 1.6.1 writes them (test/fixtures/samples/logs/mocker-1.6.1-*.log).
const ID0 = 9719479771209540000n;
const ids = (n: number) => Array.from({ length: n }, (_, i) => String(ID0 + BigInt(i)));
const announce = (id: string) => `2026-12-01T06:02:24.565055Z  INFO dynamo_llm::fpm_publisher: FPM direct publisher started worker_id=${id}`;
const notObserved = (id: string) =>
  `2026-12-01T06:02:50.704420Z  WARN dynamo_llm::kv_router::indexer::recovery::source_health: No KV events observed from worker diagnostic_code="kv_event_source_not_observed" worker_id=${id}`;

describe('worker ids kept per log file', () => {
  it('exactly 32 announced ids are all kept', () => {
    expect(scanText('w.log', ids(32).map(announce).join('\n')).workerIds).toEqual({ 'w.log': ids(32) });
  });

  it('a 33rd is dropped: the first 32 stay', () => {
    expect(scanText('w.log', ids(33).map(announce).join('\n')).workerIds).toEqual({ 'w.log': ids(32) });
  });
});

describe('worker ids kept per router finding', () => {
  it('exactly 32 named ids are all kept, a 33rd is dropped', () => {
    const found = (n: number) => scanText('frontend.log', ids(n).map(notObserved).join('\n')).byFile!['frontend.log'];
    expect(found(32)).toEqual([expect.objectContaining({ code: 'dynamo.kv-source-missing', count: 32, workerIds: ids(32) })]);
    expect(found(33)).toEqual([expect.objectContaining({ code: 'dynamo.kv-source-missing', count: 33, workerIds: ids(32) })]);
  });
});

describe('worker ids named on one router line', () => {
  it('every worker_id= field of a line is kept, in order; one glued to a word or shorter than 4 digits is not an id', () => {
    const line = `${notObserved(ids(1)[0])} peer_worker_id=1234567 worker_id=123 worker_id=${ids(2)[1]}`;
    const [f] = scanText('frontend.log', line).byFile!['frontend.log'];
    expect(f.workerIds).toEqual(ids(2));
  });

  it('a second line adds its ids to the same finding, and a line naming more than fit stops at 32', () => {
    const many = `${notObserved(ids(1)[0])} ${ids(40).slice(1).map((id) => `worker_id=${id}`).join(' ')}`;
    const [f] = scanText('frontend.log', [notObserved(ids(1)[0]), many].join('\n')).byFile!['frontend.log'];
    expect(f).toEqual(expect.objectContaining({ count: 2, workerIds: ids(32) }));
  });
});
