import { describe, expect, it } from 'vitest';
import { kvTransportOf } from '../../../src/bench/kv-transport.js';
import { nixlVerdict } from '../../../src/doctor/nixl-verdict.js';
import { renderTransport } from '../../../src/ui/bench-transport.js';
import type { BenchVariant } from '../../../src/bench/result.js';
import { recordedFacts } from '../nixl/fixtures.js';

// A disaggregated variant's KV lane, read from what its preflight's ucx.transports said: the
// summaries are nixl-verdict's own, made here from the real NIXL 1.4.1 recordings.

const preflight = (status: string, summary: string) => [{ id: 'gpu.driver', status: 'pass', summary: 'x' }, { id: 'ucx.transports', status, summary }];

describe('kvTransportOf', () => {
  it('a pass names the lane, its cost and the UCX version', () => {
    const r = nixlVerdict(recordedFacts('default'), { tls: null, ucx: null, withoutTls: null });
    expect(kvTransportOf(preflight(r.status, r.summary))).toEqual({ status: 'pass', lane: 'cma/memory', tcp: false, msPerMb: 8.15, ucxVersion: '1.22.0', summary: r.summary });
  });
  it('a TCP warning: tcp, its lane and cost', () => {
    const r = nixlVerdict(recordedFacts('tcp'), { tls: 'tcp', ucx: null, withoutTls: recordedFacts('default') });
    expect(kvTransportOf(preflight(r.status, r.summary))).toMatchObject({ status: 'warn', lane: '52% on tcp/lo and 48% on tcp/eth0', tcp: true, msPerMb: 3.37 });
  });
  it('a failure: no lane, the summary kept', () => {
    const r = nixlVerdict(recordedFacts('shm-self'), { tls: 'shm,self', ucx: null, withoutTls: null });
    expect(kvTransportOf(preflight(r.status, r.summary))).toMatchObject({ status: 'fail', lane: null, tcp: false, msPerMb: null });
  });
  it('no ucx.transports (no NIXL), a skip, or the static reading: nothing recorded', () => {
    expect(kvTransportOf([{ id: 'gpu.driver', status: 'pass', summary: 'x' }])).toBeNull();
    expect(kvTransportOf(preflight('pass', 'static (NIXL not importable): UCX_TLS unset: ...'))).toBeNull();
    expect(kvTransportOf(preflight('skip', 'test moves no KV over NIXL/UCX: UCX is not used'))).toBeNull();
  });
});

describe('the report\'s KV transfer lines', () => {
  const v = (name: string, transport: unknown) => ({ label: name, variant: { name, transport } as BenchVariant });
  it('TCP flagged with what it means; a shared-memory lane plain; nothing without NIXL', () => {
    const tcp = kvTransportOf(preflight('warn', nixlVerdict(recordedFacts('tcp'), { tls: 'tcp', ucx: null, withoutTls: null }).summary));
    const cma = kvTransportOf(preflight('pass', nixlVerdict(recordedFacts('default'), { tls: null, ucx: null, withoutTls: null }).summary));
    expect(renderTransport([v('agg', undefined), v('disagg', cma), v('disagg-tcp', tcp)], null)).toEqual([
      "KV transfer (the NIXL probe of each disaggregated variant's preflight)",
      '  disagg: cma/memory, 8.15 ms/MB, UCX 1.22.0',
      '  ! disagg-tcp: KV over TCP (52% on tcp/lo and 48% on tcp/eth0, 3.37 ms/MB): its numbers measure TCP, not a disaggregated setup anyone wants; unset UCX_TLS',
    ]);
    expect(renderTransport([v('agg', undefined)], 80)).toEqual([]);
    for (const line of renderTransport([v('disagg-tcp', tcp)], 80)) expect(line.length).toBeLessThanOrEqual(80);
  });
});
