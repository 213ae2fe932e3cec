import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../../src/recipe/schema.js';
import check from '../../../src/doctor/checks/ucx.transports.js';
import { parseUcxInfoDevices, UCX_INFO_NOT_FOUND } from '../../../src/host/ucx/parse-ucx.js';
import type { UcxFacts } from '../../../src/host/types.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';
import { SAMPLES } from '../../helpers/cli.js';

// Built before each test, not at module load: mutation testing counts code run at load as "static" and reruns every test for each such mutant.
let transports: NonNullable<UcxFacts['transports']>;
let tcpOnly: NonNullable<UcxFacts['transports']>;
let disagg: Recipe;
beforeEach(() => {
  transports = parseUcxInfoDevices(readFileSync(join(SAMPLES, 'ucx', 'ucx_info-d.single-host.txt'), 'utf8'));
  tcpOnly = transports.filter((t) => t.name === 'self' || t.name === 'tcp');
  disagg = recipeFrom({ workers: [{ role: 'decode', gpuMemoryUtilization: 0.38 }, { role: 'prefill', gpuMemoryUtilization: 0.38 }] });
});
const ucx = (tls: string | null, t: UcxFacts['transports'] = transports, err: string | null = null): UcxFacts => ({
  tls, transports: t, ucxInfoError: err, version: t ? '1.17.0' : null,
});

describe('ucx.transports', () => {
  it.each(['cuda_ipc', 'cuda_ipc,cuda_copy', 'cuda', 'self,cuda_ipc'])('UCX_TLS=%s fails, naming what is missing and a working value', async (tls) => {
    const r = await check.run(fakeFacts({ ucx: ucx(tls) }, { recipe: disagg }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain(`UCX_TLS=${tls} leaves no active-message transport`);
    expect(r.details.join('\n')).toContain('active-message transports it excludes: tcp, posix, sysv');
    expect(r.fix).toBe('unset UCX_TLS, or add one, e.g. export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp');
  });

  it('UCX_TLS=cuda_ipc fails without ucx_info too (known transport table)', async () => {
    const r = await check.run(fakeFacts({ ucx: ucx('cuda_ipc', null, UCX_INFO_NOT_FOUND) }, { recipe: disagg }));
    expect(r.status).toBe('fail');
    expect(r.evidence.source).toBe('known transport table (no ucx_info)');
  });

  it.each([null, '^cuda_ipc', 'cuda_ipc,cuda_copy,sm,self,tcp', 'all'])('UCX_TLS=%s passes', async (tls) => {
    const r = await check.run(fakeFacts({ ucx: ucx(tls) }, { recipe: disagg }));
    expect(r.status).toBe('pass');
  });

  it('skips when neither ucx_info nor UCX_TLS exist', async () => {
    const r = await check.run(fakeFacts({ ucx: ucx(null, null, UCX_INFO_NOT_FOUND) }, { recipe: disagg }));
    expect(r.status).toBe('skip');
  });

  it('warns for a disaggregated recipe when only tcp can move KV', async () => {
    const r = await check.run(fakeFacts({ ucx: ucx(null, tcpOnly) }, { recipe: disagg }));
    expect(r.status).toBe('warn');
    expect(r.summary).toContain('only tcp');
    expect(r.summary).toContain('loopback-TCP speed');
    expect(r.details.join('\n')).toContain('UCX CUDA support was not found!');
  });

  it('warns when UCX_TLS=tcp narrows a disaggregated recipe to tcp, and suggests a wider value', async () => {
    const r = await check.run(fakeFacts({ ucx: ucx('tcp,self') }, { recipe: disagg }));
    expect(r.status).toBe('warn');
    expect(r.fix).toContain('UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp');
  });

  it('skips an aggregated recipe (no KV moves over NIXL), without asking ucx_info; a UCX_TLS that would break disagg is named', async () => {
    const tcp = fakeFacts({ ucx: ucx(null, tcpOnly) });
    const r = await check.run(tcp);
    expect(r.status).toBe('skip');
    expect(tcp.calls.ucx).toBeUndefined();
    const ipc = await check.run(fakeFacts({ ucx: ucx('cuda_ipc') }, { env: { UCX_TLS: 'cuda_ipc' } }));
    expect(ipc.status).toBe('skip');
    expect(ipc.summary).toBe('test moves no KV over NIXL/UCX: UCX is not used; UCX_TLS=cuda_ipc would stop disaggregated recipes (no active-message transport)');
  });

  it('warns a disaggregated recipe when ucx_info is installed but broken', async () => {
    const r = await check.run(fakeFacts({ ucx: ucx(null, null, 'ucx_info -d failed (exit 127): libucs.so.0: cannot open shared object file') }, { recipe: disagg }));
    expect(r.status).toBe('warn');
    expect(r.summary).toContain('libucs.so.0');
  });

  it('does not pass an aggregated recipe when ucx_info failed or hung: it skips saying UCX is not used', async () => {
    const r = await check.run(fakeFacts({ ucx: ucx(null, null, 'ucx_info -d timed out after 5000 ms') }));
    expect(r.status).toBe('skip');
    expect(r.summary).toContain('UCX is not used');
  });
});
