import { describe, expect, it } from 'vitest';
import { chooseRelease, cudaForDriver } from '../../../src/plan/choose-release.js';
import { BUILDS, buildOf } from '../../../src/plan/dynamo-releases.js';

// setup's choice (issue 24): drivers x GPU compute capabilities across the release table, each with
// its reason. The table's builds: 1.0-1.1 vLLM 0.16/0.19 (nvcc 12.9, torch cu128, sm_70..sm_120),
// 1.2-1.6 vLLM 0.20-0.31 (CUDA 13.0, torch cu130, sm_75..sm_121).

const DRIVERS = ['535.288.01', '550.163.01', '570.195.03', '575.64.05', '580.65.06', '595.45.04'];
const CCS = ['6.1', '7.0', '7.5', '8.6', '8.9', '9.0', '12.0'];

/** [driver, cc, release or null, what the reason must say] */
const expected = (driver: string, cc: string): [string | null, string] => {
  if (cc === '6.1') return [null, 'no build has kernels for compute capability 6.1 (the oldest GPUs any supports: sm_70..sm_120, ai-dynamo 1.1.1 and older)'];
  const major = Number(driver.split('.')[0]);
  if (major < 575) return [null, `every build for compute capability ${cc} needs CUDA 12.9 or newer (driver >= 575.51.03)`];
  if (major === 575) return ['1.1.1', cc === '7.0' ? 'not for compute capability 7.0' : 'need CUDA 13.0 (driver >= 580.65.06), driver 575.64.05 accepts CUDA 12.9'];
  if (cc === '7.0') return ['1.1.1', '1.2.0.post1 and newer do not: its torch 2.11.0 and vLLM 0.20.1 have kernels for sm_75..sm_121, not for compute capability 7.0'];
  return ['1.6.1', `vLLM 0.31.0 with torch 2.13.0 needs CUDA 13.0 (driver ${driver} accepts ${major >= 595 ? '13.1' : '13.0'}) and has kernels for compute capability ${cc}`];
};

describe('chooseRelease: drivers x compute capabilities', () => {
  it.each(DRIVERS.flatMap((d) => CCS.map((cc) => [d, cc, ...expected(d, cc)] as const)))(
    'driver %s, compute capability %s -> %s',
    (driver, cc, release, reason) => {
      const c = chooseRelease({ driverVersion: driver, computeCapability: cc, python: '3.12.3' });
      expect(c.ok ? c.release : null).toBe(release);
      expect(c.reason).toContain(reason);
      if (!c.ok) {
        // What would fit: the driver for the newest release this GPU can run, or a newer GPU; always the mocker.
        if (cc === '6.1') expect(c.would[0]).toBe('a GPU of compute capability 7.0 or newer (this one is 6.1)');
        else if (cc === '7.0') expect(c.would[0]).toBe('NVIDIA driver >= 575.51.03 (CUDA 12.9) for ai-dynamo 1.1.1 (vLLM 0.19.0)');
        else expect(c.would.slice(0, 2)).toEqual(['NVIDIA driver >= 580.65.06 (CUDA 13.0) for ai-dynamo 1.6.1 (vLLM 0.31.0)', 'NVIDIA driver >= 575.51.03 (CUDA 12.9) for ai-dynamo 1.1.1 (vLLM 0.19.0)']);
        expect(c.would.at(-1)).toBe('the mocker engine runs without a GPU (`--engine mocker`)');
      } else {
        expect(c.build?.release).toBe(release);
      }
    },
  );
});

describe('chooseRelease: each release of the table asked for with --release', () => {
  // On driver 580.65.06 and an RTX 3090 (8.6): every CUDA 13 build runs, the CUDA 12.9 ones too.
  it.each(BUILDS.map((b) => [b.release]))('%s on driver 580.65.06, compute capability 8.6 runs', (release) => {
    const c = chooseRelease({ driverVersion: '580.65.06', computeCapability: '8.6', python: '3.12.3' }, { release });
    expect(c).toMatchObject({ ok: true, release, engine: 'vllm' });
  });
  // On driver 575: only the CUDA 12.9 builds; a CUDA 13 release says which driver it needs and which older release fits.
  it.each(BUILDS.map((b) => [b.release, b.cuda]))('%s (CUDA %s) on driver 575.64.05', (release, cuda) => {
    const c = chooseRelease({ driverVersion: '575.64.05', computeCapability: '8.6', python: '3.12.3' }, { release });
    if (cuda === '12.9') {
      expect(c).toMatchObject({ ok: true, release });
      return;
    }
    expect(c.ok).toBe(false);
    if (c.ok) return;
    expect(c.reason).toBe(`ai-dynamo ${release} does not run here: vLLM ${buildOf(release)!.vllm} and torch ${buildOf(release)!.torch} need CUDA 13.0 (driver >= 580.65.06), driver 575.64.05 accepts CUDA 12.9`);
    expect(c.would).toEqual([
      `NVIDIA driver >= 580.65.06 (CUDA 13.0) for ai-dynamo ${release} (vLLM ${buildOf(release)!.vllm})`,
      'an older release that runs here: `--release 1.1.1` (vLLM 0.19.0, CUDA 12.9)',
      'the mocker engine runs without a GPU (`--engine mocker`)',
    ]);
  });

  it('a release the table does not have is refused with the ones it has', () => {
    const c = chooseRelease({ driverVersion: '595.45.04', computeCapability: '8.6' }, { release: '2.0.0' });
    expect(c).toMatchObject({ ok: false, reason: 'the release table has no ai-dynamo 2.0.0' });
  });

  it('"1.3.0" finds 1.3.0.post1', () => {
    expect(chooseRelease({ driverVersion: '595.45.04', computeCapability: '8.6' }, { release: '1.3.0' })).toMatchObject({ ok: true, release: '1.3.0.post1' });
  });
});

describe('chooseRelease: no GPU, the mocker, Python', () => {
  it('no driver: Dynamo alone for the mocker, and it says so', () => {
    const c = chooseRelease({ driverVersion: null, python: '3.11.7' });
    expect(c).toEqual({
      ok: true, engine: 'mocker', release: '1.6.1', build: null,
      reason: 'ai-dynamo 1.6.1, the newest release: no NVIDIA GPU here: Dynamo alone (frontend, router and mocker), for the mocker engine; vLLM needs a GPU',
    });
  });

  it('no driver but --engine vllm: none fits, and why', () => {
    const c = chooseRelease({ driverVersion: null }, { engine: 'vllm' });
    expect(c).toEqual({
      ok: false, engine: 'vllm', reason: 'the vllm engine needs an NVIDIA GPU and driver, and none was found',
      would: ['an NVIDIA driver (nvidia-smi must list the GPU)', 'the mocker engine runs without a GPU (`--engine mocker`)'],
    });
  });

  it('--engine mocker on a GPU machine with an old driver: any release, Dynamo alone', () => {
    expect(chooseRelease({ driverVersion: '535.288.01', computeCapability: '6.1' }, { engine: 'mocker', release: '1.3.1' })).toMatchObject({
      ok: true, engine: 'mocker', release: '1.3.1', build: null,
    });
  });

  it('Python 3.9: ai-dynamo needs 3.10', () => {
    expect(chooseRelease({ driverVersion: null, python: '3.9.18' })).toMatchObject({ ok: false, reason: 'ai-dynamo needs Python >= 3.10, this is Python 3.9.18' });
  });

  it('Python 3.14 on a compute capability 7.0 GPU: vLLM 0.19 needs < 3.14, the only build for sm_70', () => {
    const c = chooseRelease({ driverVersion: '595.45.04', computeCapability: '7.0', python: '3.14.0' });
    expect(c.ok).toBe(false);
    if (c.ok) return;
    expect(c.reason).toBe('no release in the table runs here: Python 3.14.0: the builds this driver and GPU run need Python < 3.14');
    expect(c.would).toContain('Python < 3.14 for ai-dynamo 1.1.1 (`--python`)');
  });

  it('compute capability unknown: chosen by the driver alone, and said', () => {
    const c = chooseRelease({ driverVersion: '580.82.07', computeCapability: null });
    expect(c).toMatchObject({ ok: true, release: '1.6.1' });
    expect(c.reason).toContain('(GPU compute capability unknown: not checked)');
  });

  it('the CUDA the driver accepts: nvidia-smi\'s when given, else NVIDIA\'s table', () => {
    expect([cudaForDriver('535.288.01'), cudaForDriver('570.26'), cudaForDriver('575.51.03'), cudaForDriver('580.65.05'), cudaForDriver('580.65.06')]).toEqual(['12.2', '12.8', '12.9', '12.9', '13.0']);
    expect(chooseRelease({ driverVersion: '999.1', driverCuda: '12.9', computeCapability: '8.6' })).toMatchObject({ ok: true, release: '1.1.1' });
  });
});
