import { describe, expect, it } from 'vitest';
import { complaints, dataLane, lanesOf, parseProtoTables, parseRange, probeReport, ucxVersionLine } from '../../../src/host/ucx/parse-nixl-probe.js';
import { recording } from './fixtures.js';

// The real NIXL 1.4.1 / UCX 1.22.0 output (test/fixtures/nixl): which lane carried the writes.

const MiB4 = 4 << 20;

describe('UCX_PROTO_INFO tables of the real probe', () => {
  it('default: the writes to the other process go over cma, though the cfg line lists tcp first', () => {
    const text = recording('default');
    expect(text).toContain('intra-node cfg#1 rma_am(tcp/lo)  amo_am(tcp/lo)  am(tcp/lo cma/memory)  ka(tcp/lo)');
    const lane = dataLane(parseProtoTables(text), MiB4, probeReport(text)!.pid!);
    expect(lane).toEqual({
      config: 'cma/memory', lanes: ['cma/memory'], transports: ['cma'], kind: 'cma', tcp: false,
      endpoint: 'intra-node', operation: 'remote memory write by ucp_put* from host memory to host', description: 'zero-copy',
    });
  });

  it('UCX_TLS=tcp: split over two tcp lanes, kind tcp', () => {
    const lane = dataLane(parseProtoTables(recording('tcp')), MiB4);
    expect(lane?.config).toBe('52% on tcp/lo and 48% on tcp/eth0');
    expect(lane?.lanes).toEqual(['tcp/lo', 'tcp/eth0']);
    expect(lane?.kind).toBe('tcp');
    expect(lane?.tcp).toBe(true);
  });

  it('UCX_MM_ERROR_HANDLING=y: shared memory carries the messages, cma still the data', () => {
    const text = recording('shm-self-mm-errh');
    expect(dataLane(parseProtoTables(text), MiB4)?.kind).toBe('cma');
    const am = parseProtoTables(text).find((t) => t.endpoint === 'intra-node' && t.operation.startsWith('active message by ucp_am_send* from'));
    expect(am?.rows.map((r) => r.config)).toEqual(['sysv/memory', 'sysv/memory', 'sysv/memory']);
  });

  it('tables of the two processes are kept apart by pid; self tables never name the lane', () => {
    const tables = parseProtoTables(recording('default'));
    expect(new Set(tables.map((t) => t.pid)).size).toBe(2);
    const onlySelf = tables.filter((t) => t.endpoint === 'self');
    expect(dataLane(onlySelf, MiB4)).toBeNull();
  });

  it('a pid under 10000 is padded by UCX (`[vm:4381 :0]`, log.c %-5d): the same lines read', () => {
    const text = recording('shm-self').replace(/\[vm:(\d+):/g, (_m, pid: string) => `[vm:${String(Number(pid) % 10000).padEnd(5)}:`);
    expect(text).toMatch(/\[vm:\d{4} :0\]/);
    expect(complaints(text)).toEqual(complaints(recording('shm-self')));
    const tcp = recording('tcp').replace(/\[vm:(\d+):/g, (_m, pid: string) => `[vm:${String(Number(pid) % 10000).padEnd(5)}:`);
    expect(dataLane(parseProtoTables(tcp), MiB4)?.kind).toBe('tcp');
  });

  it('a failed agent printed no table: no lane', () => {
    expect(dataLane(parseProtoTables(recording('shm-self')), MiB4)).toBeNull();
  });

  it('ranges: single values, K/M suffixes, inf; a size outside every row has no lane', () => {
    expect(parseRange('0')).toEqual({ from: 0, to: 0 });
    expect(parseRange('16516..inf')).toEqual({ from: 16516, to: Infinity });
    expect(parseRange('8K..1M')).toEqual({ from: 8192, to: 1 << 20 });
    const t = [{ pid: 1, endpoint: 'intra-node', cfg: 'cfg#1', operation: 'remote memory write by ucp_put*', rows: [{ range: '0..1M', from: 0, to: 1 << 20, description: 'zero-copy', config: 'cma/memory' }] }];
    expect(dataLane(t, 1 << 20)?.kind).toBe('cma');
    expect(dataLane(t, (1 << 20) + 1)).toBeNull();
  });

  it('lane kinds: cuda_ipc, posix/sysv, rc, tcp beside shared memory', () => {
    const one = (config: string) => dataLane([{ pid: 1, endpoint: 'intra-node', cfg: 'cfg#1', operation: 'remote memory write by ucp_put* from cuda memory to cuda', rows: [{ range: '0..inf', from: 0, to: Infinity, description: 'zero-copy', config }] }], 1);
    expect(one('cuda_ipc/cuda')?.kind).toBe('cuda_ipc');
    expect(one('posix/memory')?.kind).toBe('shm');
    expect(one('rc_mlx5/mlx5_0:1')?.kind).toBe('ib');
    expect(one('60% on sysv/memory and 40% on tcp/lo')).toMatchObject({ kind: 'shm', tcp: true });
    expect(lanesOf('rc_mlx5/mlx5_0:1')).toEqual(['rc_mlx5/mlx5_0:1']);
  });
});

describe('UCX and NIXL complaint lines of the real probe', () => {
  it('UCX_TLS=shm,self: the real reason, without time and pid, once for both processes', () => {
    const c = complaints(recording('shm-self'));
    expect(c.ucxErrors).toEqual([
      'no active messages transport to <no debug data>: self/memory - no peer failure handler, sysv/memory - no peer failure handler, posix/memory - no peer failure handler, cma/memory - no am bcopy',
    ]);
    expect(c.nixlErrors).toEqual([
      'Unexpected UCX error: Destination is unreachable',
      'UCX endpoint create failed: failed to create ep',
      "createBackend: backend 'UCX' encountered error during intra-agent transfer setup with status NIXL_ERR_BACKEND",
    ]);
  });

  it('UCX_TLS=ud: the missing transport and what UCX has instead', () => {
    const c = complaints(recording('ud'));
    expect(c.ucxWarnings).toEqual(["transport 'ud' is not available, please use one or more of: cma, mm, posix, self, shm, sm, sysv, tcp"]);
    expect(c.ucxErrors).toEqual(['no usable transports/devices (asked ud on network:intra-node:accelerator:loopback:)']);
    expect(c.nixlErrors).toContain('Failed to create engine: Failed to create UCX context: No such device');
  });

  it('the version UCX logs, and the probe report', () => {
    const text = recording('default');
    expect(ucxVersionLine(text)?.version).toBe('1.22.0');
    expect(ucxVersionLine(text)?.path).toMatch(/nixl_cu13\.libs\/libucp-[0-9a-f]+\.so\.0\.0\.0$/);
    expect(probeReport(text)).toMatchObject({ nixl: '1.4.1', ucxVersion: '1.22.0', mem: 'DRAM', stage: 'done', verified: 3 });
    expect(probeReport(recording('cma-self'))).toMatchObject({ stage: 'agent', error: 'nixl_cu13._bindings.nixlBackendError: NIXL_ERR_BACKEND' });
    expect(probeReport('@@dynamo-dev-nixl@@ {cut')).toBeNull();
    expect(probeReport('no marker')).toBeNull();
  });
});
