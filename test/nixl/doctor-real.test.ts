import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { listPids, readSmallSync } from '../../src/host/procs/proc-files.js';
import { complaints, probeReport } from '../../src/host/ucx/parse-nixl-probe.js';
import { probeNixl } from '../../src/host/ucx/nixl-probe.js';
import { fakeEnv, FIXTURES, runCli, tempHomes } from '../helpers/cli.js';

// ucx.transports through the built binary against the real NIXL 1.4.1 (its bundled UCX 1.22.0),
// no GPU: `doctor --recipe disagg-same-gpu` with the test:nixl venv as the run's interpreter. Each
// doctor under 10 s, no probe process left. And the recordings the fakes replay
// (test/fixtures/nixl) still hold: the same reasons and lanes as the real library prints now.

const python = inject('nixlPython');
const home = tempHomes('dd-nixl-real-');

interface Check { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: Record<string, unknown> }

function probeProcesses(stateDir: string): number[] {
  return listPids().filter((pid) => (readSmallSync(`/proc/${pid}/cmdline`) ?? '').includes('nixl-probe.py')
    && (readSmallSync(`/proc/${pid}/environ`) ?? '').split('\0').includes(`DYNAMO_DEV_HOME=${stateDir}`));
}

async function doctor(vars: Record<string, string>) {
  const h = home();
  const env = fakeEnv(h, { vars: { DYNAMO_DEV_PYTHON: python, ...vars } });
  const r = await runCli(['doctor', '--recipe', 'disagg-same-gpu', '--only', 'ucx.transports', '--json'], env, { timeoutMs: 30_000 });
  return { r, left: probeProcesses(h.stateDir), check: (JSON.parse(r.stdout) as { checks: Check[] }).checks[0] };
}

describe('doctor --recipe disagg-same-gpu against the real NIXL 1.4.1', () => {
  it('default environment: passes naming the lane and UCX 1.22.0', async () => {
    const { r, left, check } = await doctor({});
    expect(check.summary).toMatch(/^NIXL 1\.4\.1 moved 4 MiB each way between two processes over (\S+) \((cma|shm|cuda_ipc|ib)\), UCX 1\.22\.0, best [\d.]+ ms \([\d.]+ ms\/MB\)$/);
    expect(check.status).toBe('pass');
    expect(r.code).toBe(0);
    expect(r.durationMs).toBeLessThan(10_000);
    expect(left).toEqual([]);
  });

  it('UCX_TLS=tcp: warns with the cost per MB over TCP', async () => {
    const { r, left, check } = await doctor({ UCX_TLS: 'tcp' });
    expect(check.status).toBe('warn');
    expect(check.summary).toMatch(/^KV would move over TCP \([^)]*tcp\/lo[^)]*; UCX_TLS=tcp\): 4 MiB, best [\d.]+ ms \([\d.]+ ms\/MB\); against [\d.]+ ms\/MB over \S+ with UCX_TLS unset$/);
    expect(check.fix).toMatch(/^unset UCX_TLS \(UCX then picks /);
    expect(r.durationMs).toBeLessThan(10_000);
    expect(left).toEqual([]);
  });

  for (const [tls, reason, fix] of [
    ['shm,self', 'no active messages transport to <no debug data>: self/memory - no peer failure handler, sysv/memory - no peer failure handler, posix/memory - no peer failure handler, cma/memory - no am bcopy', 'export UCX_MM_ERROR_HANDLING=y'],
    ['cma,self', 'no active messages transport to <no debug data>: self/memory - no peer failure handler, cma/memory - no am bcopy', 'export UCX_TLS=cma,self,tcp'],
    ['ud', 'no usable transports/devices (asked ud on network:intra-node:accelerator:loopback:)', 'UCX lists: cma, mm, posix, self, shm, sm, sysv, tcp'],
  ]) {
    it(`UCX_TLS=${tls}: fails quoting UCX's real reason`, async () => {
      const { r, left, check } = await doctor({ UCX_TLS: tls });
      expect(check.status).toBe('fail');
      expect(check.summary).toBe(`NIXL 1.4.1 cannot create a UCX agent with UCX_TLS=${tls} (nixlBackendError: NIXL_ERR_BACKEND): UCX says "${reason}"`);
      expect(check.fix).toContain(fix);
      expect(r.code).toBe(1);
      expect(r.durationMs).toBeLessThan(10_000);
      expect(left).toEqual([]);
    });
  }

  it('the fixes it gives work: UCX_MM_ERROR_HANDLING=y with shm,self, and cma,self,tcp, pass', async () => {
    expect((await doctor({ UCX_TLS: 'shm,self', UCX_MM_ERROR_HANDLING: 'y' })).check.status).toBe('pass');
    expect((await doctor({ UCX_TLS: 'cma,self,tcp' })).check.status).toBe('pass');
  });
});

describe('the recordings the fakes replay still match the real NIXL', () => {
  const SETTINGS: Record<string, Record<string, string>> = { default: {}, tcp: { UCX_TLS: 'tcp' }, 'shm-self': { UCX_TLS: 'shm,self' }, ud: { UCX_TLS: 'ud' } };
  for (const [name, vars] of Object.entries(SETTINGS)) {
    it(`${name}: the same stage, complaint lines and lane`, async () => {
      const f = await probeNixl({ python, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...vars }, mem: 'dram', timeoutMs: 9000 });
      const text = readFileSync(join(FIXTURES, 'nixl', `${name}.txt`), 'utf8');
      expect(f.report?.stage).toBe(probeReport(text)?.stage);
      expect(f.complaints).toEqual(complaints(text));
      // The default lane is the machine's (cma here; where ptrace is restricted UCX may pick another): only its presence is the recording's.
      const lane = f.lane?.config ?? null;
      if (name === 'tcp') expect(lane).toContain('tcp/lo');
      else if (name === 'default') expect(lane).not.toBeNull();
      else expect(lane).toBeNull();
    });
  }
});
