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
    since: '1.5.0',
    health: 'discovery-gated',
    sources: ['FACTS §4 (lib/llm/src/http/service/health.rs): 503 not_ready during initial discovery, then healthy with or without workers'],
  },
  {
    since: '1.6.0',
    modelReadyEndpoint: true,
    sources: ['FACTS §4: GET /v1/models/<model>/ready (observed on 1.6.1: {"model","ready","namespaces":{ns:{"worker_types":{"aggregated":{"workers":N}}}}})'],
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
