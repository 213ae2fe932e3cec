import { compareVersions, parseVersion } from './versions.js';

// What changed between the Dynamo releases dynamo-dev plans for, as data (pure). Each entry holds
// from its `since` release until the next entry; plans follow the installed release. Facts were
// read from the released wheels on PyPI (ai-dynamo X.Y.Z: dynamo/frontend/main.py or
// frontend_args.py, dynamo/mocker/args.py, dynamo/vllm/args.py) and the upstream pull requests
// named in each entry; from FROM_SOURCE on, from upstream source and release notes only (no wheel
// on this package index, nothing run here). docs/dynamo-versions.md shows the same table for users.
// What each release installs for the vllm engine: release-builds.ts (re-exported below).

export { compareVersions, parseVersion, sameRelease } from './versions.js';
export * from './release-builds.js';

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
  /**
   * The KV router's scoring and queue flags (--router-temperature, --router-kv-overlap-score-*,
   * --load-aware, ...: plan/router-flags.ts) are gone, with their DYN_* variables: their settings
   * live in the YAML of --router-policy-config. Deprecated in 1.6 (still honoured, with a warning).
   */
  routerPolicyFileOnly: boolean;
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
  routerPolicyFileOnly: false,
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
  {
    // From source and release notes only (FROM_SOURCE): no 1.7 wheel on this package index, and the
    // v1.7.0 tree could not be read whole (its snapshot is over the size limit). What is not listed
    // here (discovery, --router-mode, --no-router-kv-events, --disaggregation-mode, DYN_SYSTEM_PORT,
    // /health, /v1/models/{model}/ready, the log lines we parse) is carried over from 1.6 unverified.
    since: '1.7.0',
    routerPolicyFileOnly: true,
    sources: [
      'ai-dynamo/dynamo components/src/dynamo/common/configuration/groups/kv_router_args.py (commit 021d6169, the 1.6 line): "TODO(v1.7): Remove these flags/env aliases after the v1.6 YAML migration release"; each scoring, queue and policy flag declared Deprecated(<its place in --router-policy-config>, remove_in="v1.7")',
      'ai-dynamo/dynamo#15183 (2026-09-22): "Deprecate the six scoring flags, --load-aware, and the redundant prefill/decode selection and queue threshold/policy flags, including their environment variables ... Removal comments target v1.7"; --router-kv-events / --no-router-kv-events and --router-mode stay (shared infrastructure flags)',
      'docs.nvidia.com/dynamo/v1.7.1/reference/releases/deprecations and github.com/ai-dynamo/dynamo/releases/tag/v1.7.0: vLLM 0.33.0, NIXL 1.5.0, UCX 1.22.x (release-builds.ts SOURCE_BUILDS)',
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
export const SUPPORTED_BELOW = '1.8.0';
/**
 * From this release on the table holds facts read from upstream source and release notes only:
 * not installable from this package index, not run by any test here (versionSupport 'from-source').
 */
export const FROM_SOURCE = '1.7.0';
/** The release `npm run test:dynamo` runs (test/dynamo/requirements.txt); a version without one assumes it. */
export const VERIFIED = '1.6.1';

export interface DynamoRelease {
  /** The installed version, or null when it could not be read. */
  version: string | null;
  /** The version the facts were chosen for (the installed one, else VERIFIED). */
  plannedFor: string;
  /** True when no installed version was read and the plan assumes VERIFIED. */
  assumed: boolean;
  facts: ReleaseFacts;
}

/** The newest release the table has facts for. */
export const NEWEST_KNOWN: string = RELEASES.at(-1)!.since;

/** The facts for an installed version (null or unreadable: those of the verified release). */
export function releaseFor(version: string | null | undefined): DynamoRelease {
  const known = version && parseVersion(version) ? version : null;
  const plannedFor = known ?? VERIFIED;
  let facts = RELEASES[0];
  for (const r of RELEASES) if (compareVersions(plannedFor, r.since) >= 0) facts = r;
  return { version: version ?? null, plannedFor, assumed: known === null, facts };
}

export type VersionSupport = 'verified' | 'supported' | 'from-source' | 'too-old' | 'newer';

/**
 * Where a version stands: run by our real-Dynamo tests, planned from the table (released wheels
 * read), planned from upstream source only (not run here), or outside the table.
 */
export function versionSupport(version: string): VersionSupport {
  if (compareVersions(version, SUPPORTED_MIN) < 0) return 'too-old';
  if (compareVersions(version, SUPPORTED_BELOW) >= 0) return 'newer';
  if (compareVersions(version, FROM_SOURCE) >= 0) return 'from-source';
  const p = parseVersion(version);
  const v = parseVersion(VERIFIED)!;
  return p && !p.pre && p.nums.every((n, i) => n === v.nums[i]) ? 'verified' : 'supported';
}

