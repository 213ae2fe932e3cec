import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/ucx.transports.js';
import { UCX_INFO_NOT_FOUND } from '../../../src/host/ucx/parse-ucx.js';
import type { UcxFacts, UcxTransport } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// ucx.transports as the user reads it. The transports are those of ucx_info -d on a single host
// (samples/ucx/ucx_info-d.single-host.txt), written out here so each test builds its own.
const SAFE = 'cuda_ipc,cuda_copy,sm,self,tcp';
const t = (name: string, device: string, activeMessages: boolean): UcxTransport => ({ name, device, type: null, activeMessages });
const singleHost = (): UcxTransport[] => [
  t('self', 'memory', true), t('tcp', 'eth0', true), t('tcp', 'lo', true), t('posix', 'memory', true), t('sysv', 'memory', true),
  t('cma', 'memory', false), t('cuda_copy', 'cuda', false), t('cuda_ipc', 'cuda', false),
];
const LISTING = 'ucx_info -d: self/memory, tcp/eth0, tcp/lo, posix/memory, sysv/memory, cma/memory (no am), cuda_copy/cuda (no am), cuda_ipc/cuda (no am)';
const NO_INFO = `ucx_info unavailable (${UCX_INFO_NOT_FOUND}); judged from the known transport table`;
const ucx = (tls: string | null, transports: UcxTransport[] | null = singleHost(), err: string | null = null): UcxFacts => ({
  tls, transports, ucxInfoError: err, version: transports ? '1.17.0' : null,
});
function disagg() {
  const recipe = recipeFrom({ workers: [{ role: 'decode', gpuMemoryUtilization: 0.38 }, { role: 'prefill', gpuMemoryUtilization: 0.38 }] });
  return { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x', gpuTotalMiB: 8188 }) };
}
const run = (u: UcxFacts) => check.run(fakeFacts({ ucx: u }, disagg()));

describe('ucx.transports: UCX_TLS without active messages between processes', () => {
  it('zero-copy transports only: fails naming them, what they exclude, and what ucx_info lists', async () => {
    const r = await run(ucx('cuda_ipc,cuda_copy'));
    expect(r).toEqual({
      status: 'fail',
      summary: 'static (NIXL not importable; ucx_info is UCX 1.17.0): UCX_TLS=cuda_ipc,cuda_copy leaves no active-message transport between processes (cuda_copy, cuda_ipc: zero-copy only); NIXL fails with "no active messages transport"',
      details: ['enabled by UCX_TLS: cuda_copy, cuda_ipc', 'active-message transports it excludes: tcp, posix, sysv', LISTING],
      fix: `unset UCX_TLS, or add one, e.g. export UCX_TLS=${SAFE}`,
      evidence: {
        tls: 'cuda_ipc,cuda_copy', version: '1.17.0', ucxInfoError: null, transports: singleHost(),
        enabled: ['cuda_copy', 'cuda_ipc'], activeMessageTransports: [], source: 'ucx_info -d',
        reading: 'static', staticBecause: "NIXL is not importable in python3: ModuleNotFoundError: No module named 'nixl'", ucxInfoLibraryPath: null,
      },
    });
  });

  it('self carries messages within one process only: said, and still a fail', async () => {
    const r = await run(ucx('self,cuda_ipc'));
    expect(r.status).toBe('fail');
    expect(r.details).toEqual([
      'enabled by UCX_TLS: self, cuda_ipc',
      'self carries active messages only within one process, never to a peer worker',
      'active-message transports it excludes: tcp, posix, sysv',
      LISTING,
    ]);
  });

  it('entries this host does not have are named; nothing enabled reads "(nothing available)"', async () => {
    const r = await run(ucx('rc,ugni'));
    expect(r.summary).toBe('static (NIXL not importable; ucx_info is UCX 1.17.0): UCX_TLS=rc,ugni leaves no active-message transport between processes; NIXL fails with "no active messages transport"');
    expect(r.details).toEqual([
      'enabled by UCX_TLS: (nothing available)',
      'active-message transports it excludes: tcp, posix, sysv',
      'not available on this host: rc, ugni',
      LISTING,
    ]);
  });

  it('a transport ucx_info lists without active messages is not offered as one it excludes', async () => {
    const list = [t('self', 'memory', true), t('tcp', 'lo', false), t('posix', 'memory', true), t('cuda_ipc', 'cuda', false)];
    const r = await run(ucx('cuda_ipc', list));
    expect(r.details).toContain('active-message transports it excludes: posix');
  });

  it('without ucx_info: judged from the known table, which excludes tcp, posix and sysv', async () => {
    const r = await run(ucx('cuda_ipc', null, UCX_INFO_NOT_FOUND));
    expect(r.status).toBe('fail');
    expect(r.details).toEqual(['enabled by UCX_TLS: cuda_ipc', 'active-message transports it excludes: tcp, posix, sysv', NO_INFO]);
    expect(r.evidence).toMatchObject({ source: 'known transport table (no ucx_info)', transports: null, version: null });
  });
});

describe('ucx.transports: UCX_TLS unset but nothing reaches a peer', () => {
  it('ucx_info listing only self and CUDA copies fails: the same NIXL error, and what to install', async () => {
    const r = await run(ucx(null, [t('self', 'memory', true), t('cuda_copy', 'cuda', false), t('cuda_ipc', 'cuda', false)]));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'static (NIXL not importable; ucx_info is UCX 1.17.0): ucx_info -d lists no active-message transport between processes; NIXL fails with "no active messages transport"',
      fix: 'install a UCX build with its tcp and shared-memory transports (posix, sysv), e.g. the UCX bundled with NIXL, and make sure NIXL loads it (LD_LIBRARY_PATH)',
      details: ['ucx_info -d: self/memory, cuda_copy/cuda (no am), cuda_ipc/cuda (no am)'],
    });
  });
});

describe('ucx.transports: only tcp between prefill and decode', () => {
  it('UCX without CUDA transports: warns with the measured cost and how to get cuda_ipc', async () => {
    const r = await run(ucx(null, [t('self', 'memory', true), t('tcp', 'lo', true)]));
    expect(r).toMatchObject({
      status: 'warn',
      summary: 'static (NIXL not importable; ucx_info is UCX 1.17.0): only tcp is available to move KV between prefill and decode: KV moves at loopback-TCP speed',
      fix: 'install UCX with CUDA support (cuda_ipc) and shared memory transports, e.g. the UCX bundled with NIXL',
      details: [
        'measured on one GPU: ~608 MB/s, ~196 ms per 1,000-token request for a 0.6B model, 5x slower first token',
        'no cuda transport enabled: NIXL reports "UCX CUDA support was not found!" for GPU memory',
        'ucx_info -d: self/memory, tcp/lo',
      ],
    });
  });

  it('UCX_TLS narrowed to tcp and a cuda copy: warns naming UCX_TLS, without the missing-CUDA line', async () => {
    const r = await run(ucx('tcp,cuda_copy'));
    expect(r.status).toBe('warn');
    expect(r.summary).toBe('static (NIXL not importable; ucx_info is UCX 1.17.0): only tcp is available to move KV between prefill and decode (UCX_TLS=tcp,cuda_copy): KV moves at loopback-TCP speed');
    expect(r.fix).toBe(`unset UCX_TLS, or export UCX_TLS=${SAFE}`);
    expect(r.details).toEqual(['measured on one GPU: ~608 MB/s, ~196 ms per 1,000-token request for a 0.6B model, 5x slower first token', LISTING]);
  });

  it('UCX_TLS=tcp without ucx_info is still judged (not skipped): the same warning', async () => {
    const r = await run(ucx('tcp', null, UCX_INFO_NOT_FOUND));
    expect(r.status).toBe('warn');
    expect(r.details.at(-1)).toBe(NO_INFO);
  });

  it('tcp and shared memory together pass', async () => {
    const r = await run(ucx('tcp,sm'));
    expect(r).toMatchObject({ status: 'pass', summary: 'static (NIXL not importable; ucx_info is UCX 1.17.0): UCX_TLS=tcp,sm keeps active messages via tcp, posix, sysv', details: [LISTING] });
  });
});

describe('ucx.transports: passes and skips', () => {
  it('UCX_TLS unset: counts what ucx_info lists and names the first four message transports', async () => {
    const list = [...singleHost(), t('rc_mlx5', 'mlx5_0:1', true), t('ud_verbs', 'mlx5_0:1', true)];
    const r = await run(ucx(null, list));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('static (NIXL not importable; ucx_info is UCX 1.17.0): UCX_TLS unset: UCX picks from 9 transports, active messages via tcp, posix, sysv, rc_mlx5');
  });

  it('ucx_info listing nothing: judged from the known table, "all transports"', async () => {
    const r = await run(ucx(null, []));
    expect(r.summary).toBe('static (NIXL not importable; ucx_info is UCX 1.17.0): UCX_TLS unset: UCX picks from all transports, active messages via tcp, posix, sysv, xpmem');
  });

  it('ucx_info installed but failing warns that UCX may be broken, with the error', async () => {
    const err = 'ucx_info -d failed (exit 127): libucs.so.0: cannot open shared object file';
    const r = await run(ucx(null, null, err));
    expect(r).toMatchObject({
      status: 'warn',
      summary: `static (NIXL not importable): ucx_info failed: ${err}; UCX may be broken, and disaggregated KV transfer needs it`,
      fix: 'check the UCX install (`ucx_info -v`, LD_LIBRARY_PATH) the NIXL package uses',
      details: [`ucx_info unavailable (${err}); judged from the known transport table`],
    });
  });

  it('a not-found message with more after it is still "not found": a skip', async () => {
    const r = await run(ucx(null, null, `${UCX_INFO_NOT_FOUND} (searched /usr/bin:/bin)`));
    expect(r.status).toBe('skip');
  });

  it('neither ucx_info nor UCX_TLS: a skip with the reason as evidence', async () => {
    const r = await run(ucx(null, null, UCX_INFO_NOT_FOUND));
    expect(r).toEqual({
      status: 'skip', summary: 'static (NIXL not importable): ucx_info not found and UCX_TLS unset: nothing to check', details: [], fix: null,
      evidence: { tls: null, ucxInfoError: UCX_INFO_NOT_FOUND, reading: 'static', staticBecause: "NIXL is not importable in python3: ModuleNotFoundError: No module named 'nixl'", ucxInfoLibraryPath: null },
    });
  });

  it('an aggregated recipe skips; a blank UCX_TLS counts as unset, a working one is not warned about', async () => {
    const blank = await check.run(fakeFacts({}, { env: { UCX_TLS: '  ' } }));
    expect(blank).toEqual({ status: 'skip', summary: 'test moves no KV over NIXL/UCX: UCX is not used', details: [], fix: null, evidence: { tls: null, usesNixl: false } });
    const tcp = await check.run(fakeFacts({}, { env: { UCX_TLS: ' tcp ' } }));
    expect(tcp).toMatchObject({ summary: 'test moves no KV over NIXL/UCX: UCX is not used', evidence: { tls: 'tcp', usesNixl: false } });
  });
});
