import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/ucx.transports.js';
import type { UcxFacts, UcxTransport } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// ucx.transports on a disaggregated recipe: the "zero-copy only" list names only the transports
// without active messages (self has them, within one process); and a UCX_TLS the known table
// can judge is judged, with ucx_info failing, as a pass that says where the verdict came from.
const t = (name: string, device: string, activeMessages: boolean): UcxTransport => ({ name, device, type: null, activeMessages });
// ucx_info -d on a single host (samples/ucx/ucx_info-d.single-host.txt), written out.
const singleHost = (): UcxTransport[] => [
  t('self', 'memory', true), t('tcp', 'eth0', true), t('tcp', 'lo', true), t('posix', 'memory', true), t('sysv', 'memory', true),
  t('cma', 'memory', false), t('cuda_copy', 'cuda', false), t('cuda_ipc', 'cuda', false),
];
function disagg() {
  const recipe = recipeFrom({ workers: [{ role: 'decode', gpuMemoryUtilization: 0.38 }, { role: 'prefill', gpuMemoryUtilization: 0.38 }] });
  return { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x', gpuTotalMiB: 8188 }) };
}
const run = (u: UcxFacts) => check.run(fakeFacts({ ucx: u }, disagg()));

describe('ucx.transports: what the failure summary calls zero-copy only', () => {
  it('UCX_TLS=self,cuda_ipc: cuda_ipc is zero-copy only, self is not (it has active messages, within one process)', async () => {
    const r = await run({ tls: 'self,cuda_ipc', transports: singleHost(), ucxInfoError: null, version: '1.17.0' });
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('static (NIXL not importable; ucx_info is UCX 1.17.0): UCX_TLS=self,cuda_ipc leaves no active-message transport between processes (cuda_ipc: zero-copy only); NIXL fails with "no active messages transport"');
  });
});

describe('ucx.transports: UCX_TLS set while ucx_info fails (not missing)', () => {
  it('a UCX_TLS with shared memory and CUDA passes from the known table, not "ucx_info failed"', async () => {
    const err = 'ucx_info -d failed (exit 1): libuct.so.0: cannot open shared object file';
    const r = await run({ tls: 'sm,self,cuda_ipc', transports: null, ucxInfoError: err, version: null });
    expect(r.status).toBe('pass');
    expect(r.summary).toMatch(/^static \(NIXL not importable[^)]*\): UCX_TLS=sm,self,cuda_ipc keeps active messages via /);
    expect(r.details).toEqual([`ucx_info unavailable (${err}); judged from the known transport table`]);
    expect(r.evidence.source).toBe('known transport table (no ucx_info)');
  });
});
