import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/ucx.transports.js';
import { agentFix, nixlVerdict, ucxInfoVsNixl, msPerMb } from '../../../src/doctor/nixl-verdict.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';
import { recordedFacts } from './fixtures.js';

// ucx.transports judged on the real NIXL 1.4.1 probe output (test/fixtures/nixl).

const ucxInfo = (version: string | null, libraryPath: string | null = null) => ({ tls: null, transports: null, ucxInfoError: null, version, libraryPath });

describe('nixlVerdict on the real recordings', () => {
  it('default: pass naming the lane, its kind, NIXL and the UCX it loaded, and the measured cost', () => {
    const r = nixlVerdict(recordedFacts('default'), { tls: null, ucx: null, withoutTls: null });
    expect(r.status).toBe('pass');
    // best of the 6 recorded writes: 34.196 ms for 4 MiB (4.194 MB)
    expect(r.summary).toBe('NIXL 1.4.1 moved 4 MiB each way between two processes over cma/memory (cma), UCX 1.22.0, best 34.2 ms (8.15 ms/MB)');
    expect(r.details[0]).toBe('lane (UCX_PROTO_INFO, intra-node endpoint): remote memory write by ucp_put* from host memory to host | zero-copy | cma/memory: kernel-assisted copy between the processes (shared-memory family)');
    expect(r.details[1]).toMatch(/^6 writes of 4 MiB verified byte for byte \(3 each way\): best 34\.2 ms, median 87\.0 ms/);
    expect(r.evidence).toMatchObject({ source: 'nixl probe', nixl: '1.4.1', ucxVersion: '1.22.0', mem: 'DRAM', stage: 'done' });
  });

  it('UCX_TLS=tcp: warns with the measured cost, against the lane UCX picks with UCX_TLS unset', () => {
    const r = nixlVerdict(recordedFacts('tcp'), { tls: 'tcp', ucx: null, withoutTls: recordedFacts('default') });
    expect(r.status).toBe('warn');
    expect(r.summary).toBe('KV would move over TCP (52% on tcp/lo and 48% on tcp/eth0; UCX_TLS=tcp): 4 MiB, best 14.1 ms (3.37 ms/MB); against 8.15 ms/MB over cma/memory with UCX_TLS unset');
    expect(r.fix).toBe('unset UCX_TLS (UCX then picks cma/memory)');
    expect(r.details).toContain('a disaggregated result measured over TCP measures the socket copy, not the engine (FACTS: 608 MB/s, ~196 ms per 1,000-token request on a 0.6B model)');
  });

  it('tcp with no other lane to compare: the warning without a comparison, and a fix for the machine', () => {
    const r = nixlVerdict(recordedFacts('tcp', { env: {} }), { tls: null, ucx: null, withoutTls: null });
    expect(r.status).toBe('warn');
    expect(r.summary).toBe('KV would move over TCP (52% on tcp/lo and 48% on tcp/eth0): 4 MiB, best 14.1 ms (3.37 ms/MB)');
    expect(r.fix).toMatch(/^this UCX finds no shared-memory lane/);
  });

  it('UCX_TLS=shm,self: fail quoting UCX, the fix names UCX_MM_ERROR_HANDLING=y and adding tcp (both work for real)', () => {
    const r = nixlVerdict(recordedFacts('shm-self'), { tls: 'shm,self', ucx: null, withoutTls: null });
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('NIXL 1.4.1 cannot create a UCX agent with UCX_TLS=shm,self (nixlBackendError: NIXL_ERR_BACKEND): UCX says "no active messages transport to <no debug data>: self/memory - no peer failure handler, sysv/memory - no peer failure handler, posix/memory - no peer failure handler, cma/memory - no am bcopy"');
    expect(r.fix).toBe("export UCX_MM_ERROR_HANDLING=y (shared memory then handles peer failure and carries NIXL's messages), or unset UCX_TLS, or add tcp for NIXL's messages: export UCX_TLS=shm,self,tcp");
    expect(r.details).toContain("NIXL: createBackend: backend 'UCX' encountered error during intra-agent transfer setup with status NIXL_ERR_BACKEND");
  });

  it('UCX_TLS=cma,self: no shared memory transport to fix by error handling: add tcp (UCX_MM_ERROR_HANDLING=y fails there for real)', () => {
    const r = nixlVerdict(recordedFacts('cma-self'), { tls: 'cma,self', ucx: null, withoutTls: null });
    expect(r.status).toBe('fail');
    expect(r.fix).toBe("unset UCX_TLS, or add tcp for NIXL's messages: export UCX_TLS=cma,self,tcp");
  });

  it('UCX_TLS=^tcp: a deny list has nothing to append to', () => {
    const r = nixlVerdict(recordedFacts('not-tcp'), { tls: '^tcp', ucx: null, withoutTls: null });
    expect(r.status).toBe('fail');
    expect(r.fix).toMatch(/^export UCX_MM_ERROR_HANDLING=y .*, or unset UCX_TLS$/);
  });

  it('UCX_TLS=ud: no such device, the fix lists what UCX has here', () => {
    const r = nixlVerdict(recordedFacts('ud'), { tls: 'ud', ucx: null, withoutTls: null });
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('UCX says "no usable transports/devices (asked ud on network:intra-node:accelerator:loopback:)"');
    expect(r.fix).toBe('unset UCX_TLS, or name only transports this machine has (UCX lists: cma, mm, posix, self, shm, sm, sysv, tcp), e.g. export UCX_TLS=tcp');
    expect(r.details).toContain('NIXL: Failed to create engine: Failed to create UCX context: No such device');
  });

  it('UCX_TLS=cuda_ipc without a GPU: not available here, the same kind of fix', () => {
    const r = nixlVerdict(recordedFacts('cuda-ipc'), { tls: 'cuda_ipc', ucx: null, withoutTls: null });
    expect(r.status).toBe('fail');
    expect(r.fix).toContain('(UCX lists: cma, mm, posix, self, shm, sm, sysv, tcp)');
  });

  it('only the other process failed to create its agent: said as the agent failure, with its error', () => {
    const base = recordedFacts('shm-self');
    const r = nixlVerdict({ ...base, report: { ...base.report!, stage: 'metadata', error: undefined, peerFailed: true, peerStage: 'agent', peerError: 'nixl_cu13._bindings.nixlBackendError: NIXL_ERR_BACKEND' } }, { tls: 'shm,self', ucx: null, withoutTls: null });
    expect(r.summary).toMatch(/^NIXL 1\.4\.1 cannot create a UCX agent with UCX_TLS=shm,self \(nixlBackendError: NIXL_ERR_BACKEND\): UCX says "no active messages transport/);
  });

  it('agentFix without UCX_TLS: UCX itself is narrow', () => {
    expect(agentFix(null, ['no active messages transport to <no debug data>: sysv/memory - no peer failure handler'])).toMatch(/^export UCX_MM_ERROR_HANDLING=y/);
    expect(agentFix(null, ['something else'])).toMatch(/^check the UCX NIXL loads/);
  });

  it('a transfer that ends in ERR, bytes that differ, a deadline: fail with the reason', () => {
    const base = recordedFacts('default');
    const err = nixlVerdict({ ...base, report: { ...base.report!, stage: 'transfer', error: 'RuntimeError: check_xfer_state: ERR' } }, { tls: null, ucx: null, withoutTls: null });
    expect(err.status).toBe('fail');
    expect(err.summary).toBe('a NIXL transfer between two processes failed: RuntimeError: check_xfer_state: ERR');
    const bad = nixlVerdict({ ...base, report: { ...base.report!, stage: 'transfer', badBytes: 'bytes differ after round 1' } }, { tls: 'tcp', ucx: null, withoutTls: null });
    expect(bad.summary).toBe('a NIXL transfer between two processes failed (UCX_TLS=tcp): the bytes that arrived differ from those sent (bytes differ after round 1)');
  });

  it('killed at our deadline with no report: a warning that says so, not a pass or a fail', () => {
    const f = recordedFacts('default', { stdout: '', timedOut: true, exit: null, signal: 'SIGKILL' });
    const r = nixlVerdict(f, { tls: null, ucx: null, withoutTls: null });
    expect(r.status).toBe('warn');
    expect(r.summary).toBe('the NIXL transfer probe gave no answer: the NIXL probe did not finish in 9 s and was killed');
  });

  it('DRAM by our choice says why: no GPU, or a live run holds it', () => {
    const live = nixlVerdict({ ...recordedFacts('default'), dramWhy: 'a run is live on the GPU: its memory is left alone' }, { tls: null, ucx: null, withoutTls: null });
    expect(live.details).toContainEqual(expect.stringMatching(/^buffers: DRAM \(a run is live on the GPU: its memory is left alone: host memory\); NIXL 1\.4\.1, UCX 1\.22\.0/));
    const none = nixlVerdict(recordedFacts('default'), { tls: null, ucx: null, withoutTls: null });
    expect(none.details).toContainEqual(expect.stringMatching(/^buffers: DRAM \(no GPU here: host memory\)/));
  });

  it('cost per MB is of the best write; no writes, no cost', () => {
    expect(msPerMb(recordedFacts('default'))).toBeCloseTo(34.196 / 4.194304, 6);
    expect(msPerMb(recordedFacts('shm-self'))).toBeNull();
  });
});

describe('which UCX ucx_info is, against the one NIXL loaded', () => {
  const nixl = { version: '1.22.0', path: '/v/lib/python3.11/site-packages/nixl_cu13.libs/libucp-72ad654d.so.0.0.0' };
  it("Debian's ucx-utils is another library: flagged", () => {
    expect(ucxInfoVsNixl(ucxInfo('1.13.1', '/lib/x86_64-linux-gnu/libucs.so.0'), nixl)).toBe(
      'ucx_info on PATH is UCX 1.13.1 (/lib/x86_64-linux-gnu/libucs.so.0), not the UCX 1.22.0 NIXL loads (/v/lib/python3.11/site-packages/nixl_cu13.libs/libucp-72ad654d.so.0.0.0): `ucx_info -d` describes another library',
    );
  });
  it('the same version in the same folder: said to be the one', () => {
    expect(ucxInfoVsNixl(ucxInfo('1.22.0', '/v/lib/python3.11/site-packages/nixl_cu13.libs/libucs.so.0'), nixl)).toMatch(/, the UCX NIXL loads$/);
  });
  it('no ucx_info: nothing to say', () => {
    expect(ucxInfoVsNixl(ucxInfo(null), nixl)).toBeNull();
    expect(ucxInfoVsNixl(null, nixl)).toBeNull();
  });
});

describe('ucx.transports picks the probe where NIXL is importable', () => {
  const disagg = () => {
    const recipe = recipeFrom({ workers: [{ role: 'decode', gpuMemoryUtilization: 0.38 }, { role: 'prefill', gpuMemoryUtilization: 0.38 }] });
    return { recipe, plan: buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 }) };
  };
  it('the probe judges; the static reading is not used', async () => {
    const facts = fakeFacts({ nixl: recordedFacts('default'), ucx: ucxInfo('1.13.1', '/lib/x86_64-linux-gnu/libucs.so.0') }, disagg());
    const r = await check.run(facts);
    expect(r.status).toBe('pass');
    expect(r.summary).toMatch(/^NIXL 1\.4\.1 moved 4 MiB each way between two processes over cma\/memory/);
    expect(r.details).toContain('ucx_info on PATH is UCX 1.13.1 (/lib/x86_64-linux-gnu/libucs.so.0), not the UCX 1.22.0 NIXL loads (/tmp/nixl-try/v/lib/python3.11/site-packages/nixl_cu13.libs/libucp-72ad654d.so.0.0.0): `ucx_info -d` describes another library');
    expect(facts.calls.nixlWithoutTls).toBeUndefined();
  });
  it('UCX_TLS=tcp: the baseline probe runs beside it and the warning compares', async () => {
    const facts = fakeFacts({ nixl: recordedFacts('tcp'), nixlWithoutTls: recordedFacts('default') }, { ...disagg(), env: { UCX_TLS: 'tcp' } });
    const r = await check.run(facts);
    expect(r.status).toBe('warn');
    expect(r.summary).toContain('against 8.15 ms/MB over cma/memory with UCX_TLS unset');
    expect(facts.calls.nixlWithoutTls).toBe(1);
  });
  it('UCX_TLS=shm,self: no baseline (not tcp-only by the table), a fail', async () => {
    const facts = fakeFacts({ nixl: recordedFacts('shm-self') }, { ...disagg(), env: { UCX_TLS: 'shm,self' } });
    expect((await check.run(facts)).status).toBe('fail');
    expect(facts.calls.nixlWithoutTls).toBeUndefined();
  });
  it('an interpreter that is not there: the static reading, saying why', async () => {
    const missing = recordedFacts('default', { stdout: '', startError: 'python9 not found', exit: null });
    const r = await check.run(fakeFacts({ nixl: missing, ucx: ucxInfo('1.17.0') }, disagg()));
    expect(r.summary).toMatch(/^static \(NIXL probe did not run; ucx_info is UCX 1\.17\.0\): /);
    expect(r.evidence.staticBecause).toBe('the NIXL probe did not run: python9 not found');
  });
});
