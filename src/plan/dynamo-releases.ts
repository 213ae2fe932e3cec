// What changed between the Dynamo releases dynamo-dev plans for, as data (pure). Each entry holds
// from its `since` release until the next entry; plans follow the installed release. Facts were
// read from the released wheels on PyPI (ai-dynamo X.Y.Z: dynamo/frontend/main.py or
// frontend_args.py, dynamo/mocker/args.py, dynamo/vllm/args.py) and the upstream pull requests
// named in each entry; docs/dynamo-versions.md shows the same table for users.

export interface ReleaseFacts {
  /** First release these facts hold for. */
  since: string;
  /** The file discovery backend: frontend flag and the environment variable every process reads. */
  discovery: { flag: '--discovery-backend' | '--store-kv'; env: 'DYN_DISCOVERY_BACKEND' | 'DYN_STORE_KV' };
  /** Frontend flag for approximate KV routing (the router consumes no KV events). */
  routerKvEventsOff: '--no-router-kv-events' | '--no-kv-events';
  /** How dynamo.vllm and dynamo.mocker are told their disaggregation role. */
  disaggFlags: 'disaggregation-mode' | 'is-worker';
  /** Workers serve their system server (/health) only with DYN_SYSTEM_ENABLED=true. */
  systemEnabledEnv: boolean;
  /** dynamo.vllm waits DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS (default 5 s) after SIGTERM. */
  gracefulShutdownEnv: boolean;
  /** dynamo.vllm publishes KV events without --kv-events-config, on DYN_VLLM_KV_EVENT_PORT (20080). */
  vllmKvEventsByDefault: boolean;
  /**
   * Frontend /health: `worker-gated` says "unhealthy" until a worker registers; `always-healthy`
   * says "healthy" with or without workers; `discovery-gated` answers 503 "not_ready" until its
   * initial discovery finished, then "healthy" with or without workers. Workers are counted from
   * its `instances` in every case.
   */
  health: 'worker-gated' | 'always-healthy' | 'discovery-gated';
  /** GET /v1/models/<model>/ready answers the model's readiness with worker counts. */
  modelReadyEndpoint: boolean;
  /**
   * The frontend's answers carry `usage.prompt_tokens_details.cached_tokens` (streamed with
   * `stream_options.include_usage`): probe can count prefix-cache hits. Without it a hit cannot be
   * told from a miss by anything the frontend returns.
   */
  cachedTokens: boolean;
  /**
   * The KV router logs `kv_event_publisher_disabled` (and `kv_event_source_not_observed` /
   * `_ambiguous`) when it runs with events on while workers publish none. Before, that failure
   * leaves no line at all: diagnose, up's live warning and `doctor --logs` cannot see it.
   */
  kvEventDiagnostics: boolean;
  /**
   * Workers serve their model card's files (config.json, tokenizer files) to the frontend from
   * their system server (/v1/metadata/...). Before, the card names them hf://<served name>/<file>
   * and the frontend reads that name from its Hugging Face cache (a download when absent): a model
   * served from a local folder under a name that is no hub id (the embedded dynamo-dev/tiny) needs
   * a cache entry under that name for the frontend.
   */
  cardFilesFromWorker: boolean;
  /** Where the facts of this entry come from. */
  sources: string[];
}

type Facts = Omit<ReleaseFacts, 'since' | 'sources'>;

/** What held before the first change below. */
const FIRST: Facts = {
  discovery: { flag: '--store-kv', env: 'DYN_STORE_KV' },
  routerKvEventsOff: '--no-kv-events',
  disaggFlags: 'is-worker',
  systemEnabledEnv: true,
  gracefulShutdownEnv: false,
  vllmKvEventsByDefault: true,
  health: 'worker-gated',
  modelReadyEndpoint: false,
  cachedTokens: false,
  kvEventDiagnostics: false,
  cardFilesFromWorker: false,
};

/** Oldest first: each release with only what it changed (and where that is read). */
const CHANGES: readonly (Partial<Facts> & Pick<ReleaseFacts, 'since' | 'sources'>)[] = [
  {
    since: '0.0.0',
    sources: ['FACTS §4: DYN_SYSTEM_ENABLED needed before its deprecation; /health "unhealthy" until a worker registered up to 0.7'],
  },
  {
    since: '0.7.0',
    systemEnabledEnv: false,
    sources: [
      'ai-dynamo/dynamo#4082 (merged 2025-11-04, first in 0.7.0): DYN_SYSTEM_ENABLED deprecated, the system server follows DYN_SYSTEM_PORT alone',
      'ai-dynamo 0.7.0 dynamo/frontend/main.py: --store-kv file, DYN_FILE_KV',
    ],
  },
  {
    since: '0.8.0',
    health: 'always-healthy',
    sources: ['ai-dynamo 0.8.1 dynamo/frontend/main.py: --request-plane tcp (DYN_REQUEST_PLANE)', 'FACTS §4: the worker-gated /health ends with 0.7'],
  },
  {
    since: '0.9.0',
    sources: [
      'ai-dynamo 0.9.0 dynamo/frontend/main.py: --event-plane zmq (DYN_EVENT_PLANE): the first release that runs on one host with neither etcd nor NATS',
      'ai-dynamo 0.9.0 dynamo/vllm/args.py and dynamo/mocker/args.py: --is-prefill-worker / --is-decode-worker',
    ],
  },
  {
    since: '1.0.0',
    discovery: { flag: '--discovery-backend', env: 'DYN_DISCOVERY_BACKEND' },
    routerKvEventsOff: '--no-router-kv-events',
    disaggFlags: 'disaggregation-mode',
    gracefulShutdownEnv: true,
    sources: [
      'ai-dynamo/dynamo#6167: --store-kv / DYN_STORE_KV renamed --discovery-backend / DYN_DISCOVERY_BACKEND (ai-dynamo 1.0.0 dynamo/frontend/frontend_args.py)',
      'ai-dynamo/dynamo#6361: frontend KV-router flags take the --router- prefix (--router-kv-events; --kv-events kept as an alias)',
      'ai-dynamo 1.0.0 dynamo/vllm/backend_args.py, dynamo/mocker/args.py: --disaggregation-mode (--is-prefill-worker deprecated)',
      'ai-dynamo 1.0.0 dynamo/common/utils/graceful_shutdown.py: DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS, default 5 s',
      'ai-dynamo 1.0.0 dynamo/vllm/args.py create_kv_events_config: events on by default when prefix caching is on, endpoint tcp://*:DYN_VLLM_KV_EVENT_PORT',
    ],
  },
  {
    since: '1.1.0',
    vllmKvEventsByDefault: false,
    sources: ['ai-dynamo/dynamo#6404 (ai-dynamo 1.1.0 dynamo/vllm/args.py): no KV events unless --kv-events-config enables them'],
  },
  {
    since: '1.3.0',
    modelReadyEndpoint: true,
    sources: [
      'ai-dynamo-runtime 1.3.0.post1 and 1.3.1 dynamo/_core.abi3.so: the route /v1/models/{model_id}/ready (absent from 1.2.1\'s); a 1.3.1 frontend answers it (test/dynamo, the release matrix)',
      'FACTS §4: its answer observed on 1.6.1: {"model","ready","namespaces":{ns:{"worker_types":{"aggregated":{"workers":N}}}}}',
    ],
  },
  {
    since: '1.4.0',
    kvEventDiagnostics: true,
    cardFilesFromWorker: true,
    sources: [
      'ai-dynamo-runtime 1.4.0 dynamo/_core.abi3.so: the first with the strings kv_event_publisher_disabled and kv_event_source_not_observed (none in 1.3.1\'s)',
      'measured: (test/dynamo, the release matrix) 1.3.1 mockers publish their card files as hf://dynamo-dev/tiny/config.json and the 1.3.1 frontend fails "Model snapshots not found in cache" without a cache entry; 1.4.2 and 1.6.1 mockers publish http://<host>:<system port>/v1/metadata/.../config.json and serve the folder alone',
    ],
  },
  {
    since: '1.5.0',
    health: 'discovery-gated',
    cachedTokens: true,
    sources: [
      'FACTS §4 (lib/llm/src/http/service/health.rs): 503 not_ready during initial discovery, then healthy with or without workers',
      'measured: the 1.3.1 and 1.4.2 frontends in front of the mocker answer without usage.prompt_tokens_details.cached_tokens; 1.5 on report it (test/dynamo, the release matrix)',
    ],
  },
];

/** Oldest first: the facts that hold from each release on (every change before it applied). */
export const RELEASES: readonly ReleaseFacts[] = CHANGES.reduce<ReleaseFacts[]>((out, change) => {
  const before: Facts = out.at(-1) ?? FIRST;
  return [...out, { ...before, ...change }];
}, []);

/** Plans work from this release on: file discovery with the TCP request plane and the ZMQ event plane. */
export const SUPPORTED_MIN = '0.9.0';
/** Releases this table has no facts for yet (the next minor after the newest entry). */
export const SUPPORTED_BELOW = '1.7.0';
/** The release `npm run test:dynamo` runs (test/dynamo/requirements.txt); a version without one assumes it. */
export const VERIFIED = '1.6.1';

interface Parsed {
  nums: [number, number, number];
  /** A .devN / rcN / aN / bN release comes before the release it leads to. */
  pre: boolean;
}

/** "1.6.1", "1.3.0.post1", "1.7.0.dev20261026", "v1.6.0rc2" -> parts; null when not a version. */
export function parseVersion(v: string): Parsed | null {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(.*)$/.exec(v.trim());
  if (!m) return null;
  // Stryker disable next-line StringLiteral: the (.*) group always takes part in a match (maybe empty), so the fallback is never used
  const rest = m[4] ?? '';
  return { nums: [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)], pre: /^[.-]?(dev|a|b|rc|alpha|beta)/i.test(rest) };
}

/** Sign of a - b; pre-releases sort before their release; an unparsable version sorts first. */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return pa ? 1 : pb ? -1 : 0;
  // Stryker disable next-line EqualityOperator: nums has 3 entries; index 3 is undefined on both sides and compares equal
  for (let i = 0; i < 3; i++) if (pa.nums[i] !== pb.nums[i]) return pa.nums[i] - pb.nums[i];
  return (pa.pre ? 0 : 1) - (pb.pre ? 0 : 1);
}

/**
 * Whether an installed release is the one a user asked for with `--release`: "1.4.2" is 1.4.2
 * (and "1.3.0" is 1.3.0.post1, a re-upload of it); "1.4" is any 1.4.x. A pre-release is only
 * ever asked for by its own name.
 */
export function sameRelease(want: string, have: string): boolean {
  if (want === have) return true;
  const w = parseVersion(want);
  const h = parseVersion(have);
  if (!w || !h || w.pre || h.pre) return false;
  const parts = /^v?\d+\.\d+$/.test(want.trim()) ? 2 : 3;
  return w.nums.slice(0, parts).every((n, i) => n === h.nums[i]);
}

export interface DynamoRelease {
  /** The installed version, or null when it could not be read. */
  version: string | null;
  /** The version the facts were chosen for (the installed one, else VERIFIED). */
  plannedFor: string;
  /** True when no installed version was read and the plan assumes VERIFIED. */
  assumed: boolean;
  facts: ReleaseFacts;
}

/** The facts for an installed version (null or unreadable: those of the verified release). */
export function releaseFor(version: string | null | undefined): DynamoRelease {
  const known = version && parseVersion(version) ? version : null;
  const plannedFor = known ?? VERIFIED;
  let facts = RELEASES[0];
  for (const r of RELEASES) if (compareVersions(plannedFor, r.since) >= 0) facts = r;
  return { version: version ?? null, plannedFor, assumed: known === null, facts };
}

export type VersionSupport = 'verified' | 'supported' | 'too-old' | 'newer';

/** Where a version stands: run by our real-Dynamo tests, planned from the table, or outside it. */
export function versionSupport(version: string): VersionSupport {
  if (compareVersions(version, SUPPORTED_MIN) < 0) return 'too-old';
  if (compareVersions(version, SUPPORTED_BELOW) >= 0) return 'newer';
  const p = parseVersion(version);
  const v = parseVersion(VERIFIED)!;
  return p && !p.pre && p.nums.every((n, i) => n === v.nums[i]) ? 'verified' : 'supported';
}

// ---------------------------------------------------------------------------------------------
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
} as const;

/** NVIDIA's minimum drivers (CUDA Toolkit release notes, table 3), for the CUDA versions builds here need. */
const DRIVER_FOR_CUDA: Readonly<Record<string, string>> = { '12.9': '575.51.03', '13.0': '580.65.06' };

function build(release: string, vllm: keyof typeof VLLM, nixl: string, placeholder: string | null = null): ReleaseBuild {
  const v = VLLM[vllm];
  const t = TORCH[v.torch];
  const cuda = compareVersions(v.cuda, t.cuda) >= 0 ? v.cuda : t.cuda;
  return {
    release,
    python: { min: '3.10', below: v.below },
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
      `vllm ${vllm} METADATA: torch==${v.torch}, Requires-Python <${v.below}; vllm/_C*.so built by nvcc ${v.cuda} (libcudart.so.${v.cuda.split('.')[0]}), SASS sm_${v.archs.map((a) => a.replace('.', '')).join(', sm_')}`,
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

/** The build facts of a release (exact version; "1.3.0" finds "1.3.0.post1"); null when the table has none. */
export function buildOf(version: string | null | undefined): ReleaseBuild | null {
  if (!version) return null;
  const exact = BUILDS.find((b) => b.release === version);
  if (exact) return exact;
  const p = parseVersion(version);
  if (!p || p.pre) return null;
  return BUILDS.find((b) => {
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
