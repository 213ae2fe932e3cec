import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UCX_INFO_NOT_FOUND } from '../../../src/host/ucx/parse-ucx.js';
import { probeUcx } from '../../../src/host/ucx/ucx.js';
import { FIXTURES } from '../../helpers/cli.js';

const withFake = (scenario: string, extra: Record<string, string> = {}) => ({
  PATH: `${join(FIXTURES, 'bin', 'ucx')}:/usr/bin:/bin`,
  FAKE_UCX_INFO: scenario,
  ...extra,
});

describe('probeUcx (fake ucx_info on PATH)', () => {
  it('reads transports and version of the single-host machine, and UCX_TLS from the env', async () => {
    const f = await probeUcx(withFake('single-host', { UCX_TLS: 'cuda_ipc' }), 5000);
    expect(f.tls).toBe('cuda_ipc');
    expect(f.version).toBe('1.17.0');
    expect(f.ucxInfoError).toBeNull();
    expect(f.transports?.map((t) => t.name)).toEqual(['self', 'tcp', 'tcp', 'posix', 'sysv', 'cma', 'cuda_copy', 'cuda_ipc']);
  });

  it('tcp-only: self and tcp', async () => {
    const f = await probeUcx(withFake('tcp-only'), 5000);
    expect(f.tls).toBeNull();
    expect([...new Set(f.transports?.map((t) => t.name))]).toEqual(['self', 'tcp']);
  });

  it('broken: reports the failure with its message, no transports', async () => {
    const f = await probeUcx(withFake('broken'), 5000);
    expect(f.transports).toBeNull();
    expect(f.version).toBeNull();
    expect(f.ucxInfoError).toContain('exit 127');
    expect(f.ucxInfoError).toContain('libucs.so.0: cannot open shared object file');
  });

  it('hang: times out instead of hanging', async () => {
    const f = await probeUcx(withFake('hang'), 300);
    expect(f.ucxInfoError).toBe('ucx_info -d timed out after 300 ms');
  });

  it('not installed', async () => {
    const f = await probeUcx({ PATH: '/nonexistent' }, 5000);
    expect(f).toEqual({ tls: null, transports: null, libraryPath: null, ucxInfoError: UCX_INFO_NOT_FOUND, version: null });
  });
});
