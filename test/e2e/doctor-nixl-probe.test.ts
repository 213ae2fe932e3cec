import { describe, expect, it } from 'vitest';
import { listPids, readSmallSync } from '../../src/host/procs/proc-files.js';
import { fakeEnv, runCli, tempHomes } from '../helpers/cli.js';

// doctor --recipe disagg-same-gpu judges the KV transport by the active NIXL probe, through the
// built binary, with the fake nixl._api replaying the real NIXL 1.4.1 under each UCX setting
// (FAKE_NIXL=by-env; test/unit/nixl/fake-vs-real.test.ts holds it to the recordings; the fake
// package says it is NIXL 0.6.0, test/fixtures/python/nixl/__init__.py). The same
// cases against the real NIXL: test/nixl (npm run test:nixl).

const home = tempHomes('dd-nixl-e2e-');

/** Processes of this test's home still running the probe script (the env carries the home). */
function probeProcesses(stateDir: string): number[] {
  return listPids().filter((pid) => {
    const cmd = readSmallSync(`/proc/${pid}/cmdline`) ?? '';
    if (!cmd.includes('nixl-probe.py')) return false;
    return (readSmallSync(`/proc/${pid}/environ`) ?? '').split('\0').includes(`DYNAMO_DEV_HOME=${stateDir}`);
  });
}

interface Check { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: Record<string, unknown> }

async function doctor(vars: Record<string, string>, json = true) {
  const h = home();
  const env = fakeEnv(h, { python: true, vars: { FAKE_NIXL: 'by-env', ...vars } });
  const r = await runCli(['doctor', '--recipe', 'disagg-same-gpu', '--only', 'ucx.transports', ...(json ? ['--json'] : [])], env, { timeoutMs: 30_000 });
  const left = probeProcesses(h.stateDir);
  return { r, left, check: json ? (JSON.parse(r.stdout) as { checks: Check[] }).checks[0] : null };
}

describe('doctor --recipe disagg-same-gpu: the NIXL probe', () => {
  it('default environment: pass naming the lane NIXL used (cma) and the UCX it loaded', async () => {
    const { r, left, check } = await doctor({});
    expect(r.code).toBe(0);
    expect(check!.status).toBe('pass');
    expect(check!.summary).toMatch(/^NIXL [\d.]+ moved 4 MiB each way between two processes over cma\/memory \(cma\), UCX 1\.22\.0, best [\d.]+ ms \([\d.]+ ms\/MB\)$/);
    expect(r.durationMs).toBeLessThan(10_000);
    expect(left).toEqual([]);
  });

  it('UCX_TLS=tcp: a warning with the cost per MB over TCP against the lane without UCX_TLS', async () => {
    const { r, left, check } = await doctor({ UCX_TLS: 'tcp' });
    expect(check!.status).toBe('warn');
    expect(check!.summary).toMatch(/^KV would move over TCP \(52% on tcp\/lo and 48% on tcp\/eth0; UCX_TLS=tcp\): 4 MiB, best [\d.]+ ms \([\d.]+ ms\/MB\); against [\d.]+ ms\/MB over cma\/memory with UCX_TLS unset$/);
    expect(check!.fix).toBe('unset UCX_TLS (UCX then picks cma/memory)');
    expect(r.durationMs).toBeLessThan(10_000);
    expect(left).toEqual([]);
  });

  for (const [tls, reason, fix] of [
    ['shm,self', 'no active messages transport to <no debug data>: self/memory - no peer failure handler', 'export UCX_MM_ERROR_HANDLING=y'],
    ['cma,self', 'cma/memory - no am bcopy', 'export UCX_TLS=cma,self,tcp'],
    ['ud', 'no usable transports/devices (asked ud on network:intra-node:accelerator:loopback:)', 'UCX lists: cma, mm, posix, self, shm, sm, sysv, tcp'],
  ]) {
    it(`UCX_TLS=${tls}: fails quoting UCX's reason, with the fix that works`, async () => {
      const { r, left, check } = await doctor({ UCX_TLS: tls });
      expect(r.code).toBe(1);
      expect(check!.status).toBe('fail');
      expect(check!.summary).toMatch(new RegExp(`^NIXL [\\d.]+ cannot create a UCX agent with UCX_TLS=${tls.replace('^', '\\^')} \\(nixlBackendError: NIXL_ERR_BACKEND\\): UCX says "`));
      expect(check!.summary).toContain(reason);
      expect(check!.fix).toContain(fix);
      expect(r.durationMs).toBeLessThan(10_000);
      expect(left).toEqual([]);
    });
  }

  it('as a person reads it: the failure, UCX and NIXL lines under it, the fix', async () => {
    const { r } = await doctor({ UCX_TLS: 'shm,self' }, false);
    expect(r.stdout).toContain('UCX says "no active messages transport to <no debug data>');
    expect(r.stdout).toContain("NIXL: createBackend: backend 'UCX' encountered error during intra-agent transfer setup with status NIXL_ERR_BACKEND");
    expect(r.stdout).toContain('UCX_MM_ERROR_HANDLING=y');
  });

  it('NIXL without its agent API (FAKE_NIXL unset): the static reading, said to be static', async () => {
    const { check } = await doctor({ FAKE_NIXL: '' });
    expect(check!.summary).toMatch(/^static \(NIXL not importable\): /);
    expect(check!.evidence.staticBecause).toMatch(/^NIXL is not importable in python3: ModuleNotFoundError: No module named 'nixl._api'$/);
  });
});
