import { compareVersions, parseVersion } from './versions.js';

// What each release installs for the vllm engine (`pip install "ai-dynamo[vllm]==X"`) and what
// that build needs of the machine. Read from the released wheels on PyPI:
// - ai-dynamo X's METADATA (`pip download --no-deps ai-dynamo==X`): the vllm extra's pins of vLLM
//   and NIXL, Requires-Python, the aisimulate placeholder;
// - vLLM's METADATA (pip's --dry-run --report): its torch pin and Requires-Python;
// - torch's wheel: torch/version.py (`cuda = '13.0'`) and the SASS architectures in the
//   .nv_fatbin section of torch/lib/libtorch_cuda.so;
// - vLLM's wheel: vllm/_C*.so and vllm/_moe_C*.so, their NEEDED libcudart.so.N, the nvcc that built
//   them ("Cuda compilation tools, release 12.9, V12.9.86") and their .nv_fatbin architectures.
// The minimum driver is NVIDIA's for the newer of the two CUDA versions (CUDA Toolkit release
// notes, table 3 "CUDA Toolkit and Corresponding Driver Versions": 12.9 GA >= 575.51.03,
// 13.0 GA >= 580.65.06; src/plan/cuda-rules.ts TOOLKIT_DRIVER_MIN holds the whole table).

/** A compute capability: "8.6" (sm_86), "12.0" (sm_120). */
export type ComputeCapability = string;

export interface ReleaseBuild {
  /** The ai-dynamo release. */
  release: string;
  /** Python versions both ai-dynamo and the pinned vLLM accept: >= min, < below. */
  python: { min: string; below: string };
  /** The placeholder requirement (`aisimulate==0.13.0`, Python 3.11-3.13 only), when the release has one. */
  placeholder: string | null;
  /** ai-dynamo[vllm]'s pins. */
  vllm: string;
  nixl: string;
  /** vLLM's own pin of torch. */
  torch: string;
  /** torch.version.cuda of that torch wheel on PyPI. */
  torchCuda: string;
  /** The CUDA that built vLLM's kernels (their nvcc); its libcudart major is the same. */
  vllmCuda: string;
  /** The newer of torchCuda and vllmCuda: what the driver must accept. */
  cuda: string;
  /** NVIDIA's minimum Linux driver for `cuda`. */
  minDriver: string;
  /** GPU architectures with kernels (SASS) in the torch wheel, and in vLLM's. */
  torchArchs: readonly ComputeCapability[];
  vllmArchs: readonly ComputeCapability[];
  sources: readonly string[];
}

const TORCH = {
  '2.9.1': { cuda: '12.8', archs: ['7.0', '7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0'] },
  '2.10.0': { cuda: '12.8', archs: ['7.0', '7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0'] },
  '2.11.0': { cuda: '13.0', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '10.3', '12.0', '12.1'] },
  '2.13.0': { cuda: '13.0', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '10.3', '12.0', '12.1'] },
  // torch-2.14.0-cp311-cp311-manylinux_2_28_x86_64.whl (PyPI, read 2026-12-07): torch/version.py
  // cuda = '13.0' ('2.14.0+cu130'); libtorch_cuda.so's .nv_fatbin SASS as below, no PTX.
  '2.14.0': { cuda: '13.0', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '10.3', '12.0', '12.1'] },
} as const;

/** vLLM wheels on PyPI: their nvcc and SASS architectures (sm_52 of a few generic kernels left out: torch has none). */
const VLLM = {
  '0.14.1': { torch: '2.9.1', cuda: '12.9', below: '3.14', archs: ['7.0', '7.5', '8.0', '8.9', '9.0', '10.0', '12.0'] },
  '0.16.0': { torch: '2.9.1', cuda: '12.9', below: '3.14', archs: ['7.0', '7.5', '8.0', '8.9', '9.0', '10.0', '12.0'] },
  '0.19.0': { torch: '2.10.0', cuda: '12.9', below: '3.14', archs: ['7.0', '7.5', '8.0', '8.9', '9.0', '10.0', '12.0'] },
  '0.20.1': { torch: '2.11.0', cuda: '13.0', below: '3.15', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0'] },
  '0.23.0': { torch: '2.11.0', cuda: '13.0', below: '3.15', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0'] },
  '0.26.0': { torch: '2.11.0', cuda: '13.0', below: '3.15', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0'] },
  '0.28.0': { torch: '2.13.0', cuda: '13.0', below: '3.15', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0'] },
  '0.31.0': { torch: '2.13.0', cuda: '13.0', below: '3.15', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0'] },
  // vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl (PyPI, read 2026-12-07): METADATA torch==2.14.0,
  // Requires-Python >=3.11,<3.15 (the first vLLM here that refuses Python 3.10); its kernels are in
  // vllm/_C_stable_libtorch.abi3.so and vllm/_moe_C_stable_libtorch.abi3.so (no _C.abi3.so any
  // more): NEEDED libcudart.so.13, "Cuda compilation tools, release 13.0", SASS as below.
  '0.33.0': { torch: '2.14.0', cuda: '13.0', min: '3.11', below: '3.15', archs: ['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0'] },
} as const;

/** NVIDIA's minimum drivers (CUDA Toolkit release notes, table 3), for the CUDA versions builds here need. */
const DRIVER_FOR_CUDA: Readonly<Record<string, string>> = { '12.9': '575.51.03', '13.0': '580.65.06' };

function build(release: string, vllm: keyof typeof VLLM, nixl: string, placeholder: string | null = null): ReleaseBuild {
  const v: { torch: keyof typeof TORCH; cuda: string; min?: string; below: string; archs: readonly string[] } = VLLM[vllm];
  const t = TORCH[v.torch];
  const cuda = compareVersions(v.cuda, t.cuda) >= 0 ? v.cuda : t.cuda;
  return {
    release,
    python: { min: v.min ?? '3.10', below: v.below },
    placeholder,
    vllm,
    nixl,
    torch: v.torch,
    torchCuda: t.cuda,
    vllmCuda: v.cuda,
    cuda,
    minDriver: DRIVER_FOR_CUDA[cuda],
    torchArchs: t.archs,
    vllmArchs: v.archs,
    sources: [
      `ai-dynamo ${release} METADATA: vllm[flashinfer,otel,runai]==${vllm}, ${nixl}${placeholder ? `, ${placeholder}` : ''}; Requires-Python >=3.10`,
      `vllm ${vllm} METADATA: torch==${v.torch}, Requires-Python ${v.min ? `>=${v.min},` : ''}<${v.below}; vllm/_C*.so built by nvcc ${v.cuda} (libcudart.so.${v.cuda.split('.')[0]}), SASS sm_${v.archs.map((a) => a.replace('.', '')).join(', sm_')}`,
      `torch ${v.torch} (PyPI, Linux x86_64): torch/version.py cuda = '${t.cuda}'; libtorch_cuda.so SASS sm_${t.archs.map((a) => a.replace('.', '')).join(', sm_')}`,
      `NVIDIA CUDA Toolkit release notes, table 3: CUDA ${cuda} GA needs Linux driver >= ${DRIVER_FOR_CUDA[cuda]}`,
    ],
  };
}

const AISIM_12 = 'aisimulate==0.12.0';

/** Every release with a vllm extra the chooser may install, oldest first. */
export const BUILDS: readonly ReleaseBuild[] = [
  build('0.9.0', '0.14.1', 'nixl[cu12]<=0.9.0'),
  build('0.9.1', '0.14.1', 'nixl[cu12]<=0.9.0'),
  build('1.0.0', '0.16.0', 'nixl[cu12]<=0.10.1'),
  build('1.0.1', '0.16.0', 'nixl[cu12]<=0.10.1'),
  build('1.0.2', '0.16.0', 'nixl[cu12]<=0.10.1'),
  build('1.1.0', '0.19.0', 'nixl[cu12]<=0.10.1'),
  build('1.1.1', '0.19.0', 'nixl[cu12]<=0.10.1'),
  // 1.2 pins a CUDA 12 NIXL beside a CUDA 13 torch and vLLM (its METADATA as it is).
  build('1.2.0.post1', '0.20.1', 'nixl[cu12]<=0.10.1'),
  build('1.2.1', '0.20.1', 'nixl[cu12]<=0.10.1'),
  build('1.3.0.post1', '0.23.0', 'nixl[cu13]==1.1.0'),
  build('1.3.1', '0.23.0', 'nixl[cu13]==1.1.0'),
  build('1.4.0', '0.26.0', 'nixl[cu13]==1.3.2'),
  build('1.4.1', '0.26.0', 'nixl[cu13]==1.3.2'),
  build('1.4.2', '0.26.0', 'nixl[cu13]==1.3.2'),
  build('1.5.0', '0.28.0', 'nixl[cu13]==1.3.2', AISIM_12),
  build('1.5.1', '0.28.0', 'nixl[cu13]==1.3.2', AISIM_12),
  build('1.6.0', '0.31.0', 'nixl[cu13]==1.4.1', 'aisimulate>0.13.0.dev1,<0.14.0'),
  build('1.6.1', '0.31.0', 'nixl[cu13]==1.4.1', 'aisimulate==0.13.0'),
];

/**
 * Releases known from their source and release notes only, never chosen by `setup` (no wheel on
 * the package index dynamo-dev was built against, nothing run here): their builds let doctor judge
 * an environment someone installed elsewhere. What could not be read is said in `unread`.
 */
export interface SourceBuild extends ReleaseBuild {
  /** Facts of ai-dynamo's own METADATA not read (no wheel here): each says what stands in for it. */
  unread: readonly string[];
}

/**
 * ai-dynamo 1.7.x (1.7.0 2026-11-23, 1.7.1 2026-12-03 "Backend pins are unchanged from v1.7.0"):
 * the pins from the release notes, vLLM's and torch's facts from their PyPI wheels (vLLM 0.33.0
 * and torch 2.14.0 are on this index, ai-dynamo 1.7 is not). docs/dynamo-versions.md says the same.
 */
function sourceBuild(release: string, notes: string): SourceBuild {
  const b = build(release, '0.33.0', 'nixl 1.5.0');
  return {
    ...b,
    sources: [
      'docs.nvidia.com/dynamo/v1.7.1/reference/releases/deprecations (pins from v1.6.2 to v1.7.x): vLLM 0.31.0 -> 0.33.0, NIXL (vLLM) 1.4.1 -> 1.5.0, UCX 1.21.x -> 1.22.x, CUDA 13.0 / 13.1, driver 580.xx+',
      notes,
      // build()'s first line would claim ai-dynamo's own METADATA: not read (unread below).
      ...b.sources.slice(1),
    ],
    unread: [
      `ai-dynamo ${release} METADATA (Requires-Dist of the vllm extra, Requires-Python) not read: no 1.7 wheel on this package index and the v1.7.0 source tree was not readable (its snapshot is over the size limit); python.min is vLLM 0.33.0's own (>=3.11)`,
      'the exact NIXL requirement (1.6.1 pins nixl[cu13]==1.4.1; 1.7 is "NIXL 1.5.0" in the release notes)',
      'the aisimulate placeholder: 1.7.1 "moves to the published AISim 0.14.0", so 1.7.0 pinned an unpublished one (its spec not read)',
    ],
  };
}

export const SOURCE_BUILDS: readonly SourceBuild[] = [
  sourceBuild('1.7.0', 'github.com/ai-dynamo/dynamo/releases/tag/v1.7.0 (commit 1a96a04): "The engines move to SGLang v0.5.23, TensorRT-LLM v1.4.0rc2, and vLLM v0.33.0"'),
  sourceBuild('1.7.1', 'docs.nvidia.com/dynamo/v1.7.1/reference/releases: v1.7.1 "Backend pins are unchanged from v1.7.0"'),
];

/** Source-only build facts of a release (same matching as buildOf); null when none. */
export function sourceBuildOf(version: string | null | undefined): SourceBuild | null {
  return matchBuild(SOURCE_BUILDS, version);
}

/** The build facts of a release (exact version; "1.3.0" finds "1.3.0.post1"); null when the table has none. */
export function buildOf(version: string | null | undefined): ReleaseBuild | null {
  return matchBuild(BUILDS, version);
}

function matchBuild<B extends ReleaseBuild>(builds: readonly B[], version: string | null | undefined): B | null {
  if (!version) return null;
  const exact = builds.find((b) => b.release === version);
  if (exact) return exact;
  const p = parseVersion(version);
  if (!p || p.pre) return null;
  return builds.find((b) => {
    const q = parseVersion(b.release)!;
    return q.nums.every((n, i) => n === p.nums[i]);
  }) ?? null;
}

/** "8.6" -> [8, 6]; null when not a compute capability. */
export function parseCapability(cc: string): [number, number] | null {
  const m = /^\s*(\d+)\.(\d+)\s*$/.exec(cc);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/**
 * Whether kernels built for `archs` run on a GPU of compute capability `cc`: a cubin for sm_XY
 * runs on X.Z for Z >= Y (same major; CUDA C++ Programming Guide, "Binary Compatibility"). The
 * wheels' PTX is not counted: torch's have none, so JIT from vLLM's alone would not make it run.
 */
export function archsRun(archs: readonly ComputeCapability[], cc: ComputeCapability): boolean {
  const g = parseCapability(cc);
  if (!g) return false;
  return archs.some((a) => {
    const k = parseCapability(a)!;
    return k[0] === g[0] && k[1] <= g[1];
  });
}

/** Whether both the torch and the vLLM kernels of a build run on this GPU. */
export const buildRunsOn = (b: ReleaseBuild, cc: ComputeCapability): boolean => archsRun(b.torchArchs, cc) && archsRun(b.vllmArchs, cc);

/** "sm_75..sm_120": the range of a build's common architectures, for messages. */
export function archRange(b: ReleaseBuild): string {
  const both = b.torchArchs.filter((a) => archsRun(b.vllmArchs, a));
  const sm = (a: string) => `sm_${a.replace('.', '')}`;
  return both.length === 0 ? 'none' : `${sm(both[0])}..${sm(both.at(-1)!)}`;
}
