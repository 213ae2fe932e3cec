import { describe, expect, it } from 'vitest';
import { chooseSetup, oldestCapability } from '../../../src/plan/setup-choice.js';

// setup's choice over chooseRelease (issue 24): the engine from the machine, the vLLM build from the
// release table, the sentence said after "chose: ai-dynamo X for the E engine:", and which refusals
// are a flag's (one line) rather than the machine's.

const gpu = (driverVersion: string, cudaVersion: string, computeCaps: string[]) => ({ driverVersion, cudaVersion, computeCaps });

describe('chooseSetup', () => {
  it('no GPU: the mocker with the verified release, said so; a GPU: vllm by default', () => {
    expect(chooseSetup(null, {})).toEqual({
      ok: true, release: '1.6.1', engine: 'mocker', build: null,
      reasons: ['no NVIDIA GPU here: Dynamo alone, for the mocker engine (no vLLM, no torch)', 'release 1.6.1, the newest our real-Dynamo tests run'],
    });
    const c = chooseSetup(gpu('595.71.05', '13.2', ['8.9']), {}, '3.12.3');
    expect(c).toMatchObject({ ok: true, engine: 'vllm', release: '1.6.1', build: { vllm: '0.31.0' } });
    expect(c.reasons).toEqual(['the newest release that runs here: vLLM 0.31.0 with torch 2.13.0 needs CUDA 13.0 (driver 595.71.05 accepts 13.2) and has kernels for compute capability 8.9 (sm_75..sm_121)']);
  });

  it('driver 575: 1.1.1, with why the newer ones do not run', () => {
    const c = chooseSetup(gpu('575.64.05', '12.9', ['8.6']), {});
    expect(c).toMatchObject({ ok: true, release: '1.1.1' });
    expect(c.reasons[0]).toMatch(/^the newest release that runs here: vLLM 0\.19\.0 .*; 1\.2\.0\.post1 and newer do not: vLLM 0\.20\.1 and torch 2\.11\.0 need CUDA 13\.0/);
  });

  it('none fits on the machine: the reason without chooseRelease\'s lead-in, what would, no flag', () => {
    const c = chooseSetup(gpu('570.133.07', '12.8', ['8.9']), {});
    expect(c).toEqual({
      ok: false, flag: null,
      reasons: ['driver 570.133.07 accepts CUDA 12.8, and every build for compute capability 8.9 needs CUDA 12.9 or newer (driver >= 575.51.03)'],
      wouldFit: ['NVIDIA driver >= 580.65.06 (CUDA 13.0) for ai-dynamo 1.6.1 (vLLM 0.31.0)', 'NVIDIA driver >= 575.51.03 (CUDA 12.9) for ai-dynamo 1.1.1 (vLLM 0.19.0)', 'the mocker engine runs without a GPU (`--engine mocker`)'],
    });
  });

  it('--release that this machine cannot run is the flag\'s refusal; one it can is taken "as asked"', () => {
    expect(chooseSetup(gpu('570.133.07', '12.8', ['8.9']), { release: '1.6.1' })).toMatchObject({ ok: false, flag: '--release', reasons: [expect.stringMatching(/^ai-dynamo 1\.6\.1 does not run here: /)] });
    expect(chooseSetup(gpu('595.71.05', '13.2', ['8.9']), { release: '1.3.1' })).toMatchObject({ ok: true, release: '1.3.1', reasons: [expect.stringMatching(/^as asked: vLLM 0\.23\.0 /)] });
    expect(chooseSetup(null, { release: '0.4.0' })).toMatchObject({ ok: false, flag: '--release', reasons: ['--release 0.4.0 is older than the plans support'] });
  });

  it('two GPUs: the build must run on the oldest; the Python found limits the builds', () => {
    // A V100 (7.0) beside an RTX 4080 (8.9): CUDA 13 builds have no sm_70, so 1.1.1.
    expect(chooseSetup(gpu('595.71.05', '13.2', ['8.9', '7.0']), {})).toMatchObject({ ok: true, release: '1.1.1' });
    // Python 3.14 on a V100: the only sm_70 builds (vLLM <= 0.19) need Python < 3.14.
    expect(chooseSetup(gpu('595.71.05', '13.2', ['7.0']), {}, '3.14.0')).toMatchObject({ ok: false, flag: null });
    expect(chooseSetup(gpu('595.71.05', '13.2', ['7.0']), {}, null)).toMatchObject({ ok: true, release: '1.1.1' });
  });

  it('oldestCapability: numeric, not text order; null for none', () => {
    expect(oldestCapability(['12.0', '8.9', '9.0'])).toBe('8.9');
    expect(oldestCapability([])).toBeNull();
  });

  it('--engine vllm without a GPU: none fits, the mocker would', () => {
    expect(chooseSetup(null, { engine: 'vllm' })).toMatchObject({ ok: false, flag: null, wouldFit: [expect.stringContaining('--engine mocker')] });
  });
});
