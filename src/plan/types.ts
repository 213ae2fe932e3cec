import type { WorkerRole } from '../recipe/schema.js';

export type ProcessRole = 'frontend' | WorkerRole;

export interface PlannedProcess {
  /** frontend, agg-0, agg-1, prefill-0, decode-0, ... */
  name: string;
  role: ProcessRole;
  /** argv[0] is the Python interpreter. */
  argv: string[];
  /** Only what the plan adds on top of the user's environment. */
  env: Record<string, string>;
  /** e.g. { http: 8000 } or { system: 8081, kvEvents: 20080, nixlSideChannel: 20097 }. */
  ports: Record<string, number>;
  gpuMemoryUtilization: number | null;
  /** Names that must be ready (KV line logged) before this one starts. */
  waitFor: string[];
  ready: {
    /** Regex source matched against the log; group 1 is the KV token count. */
    logPattern?: string;
    /** URL polled for readiness (worker /health, frontend /v1/models). */
    http?: string;
    /** Frontend (1.6+): the model's readiness sub-resource, with worker counts per worker type. */
    modelReady?: string;
    /** Frontend: how many workers it must count (instances of a `generate` endpoint) before ready. */
    workers?: number;
    /** Frontend: one real chat completion must be answered before the run is ready. */
    completion?: boolean;
    /** Worker: ready once the frontend counts every worker and answers (the mocker has no ready /health). */
    viaFrontend?: boolean;
    /**
     * Worker: its `http` is asked only after its log says it registered (this regex source), backing
     * off while it says notready: each 503 answer is an ERROR line in its own log (FACTS §10).
     */
    registeredLine?: string;
  };
  /** Worker publishes KV events (--kv-events-config with enable_kv_cache_events: true). */
  publishesKvEvents: boolean;
  /** Estimated KV tokens (null without GPU total or model config). */
  kvTokensEstimate: number | null;
  /** Tokens per KV block (cache hits come in whole blocks); null for the frontend; absent in runs recorded before it existed. */
  blockSize?: number | null;
  /** CPU device: the worker's KV cache in GiB of host RAM (VLLM_CPU_KVCACHE_SPACE). */
  kvCacheGiB?: number;
}

export interface Plan {
  recipe: string;
  model: string;
  engine: 'vllm' | 'mocker';
  /** The installed Dynamo version the plan follows (assumed: none could be read, the verified release's facts are used). */
  dynamo?: { version: string | null; plannedFor: string; assumed: boolean };
  /**
   * The interpreter every process runs and where it came from (absent in runs recorded before it
   * existed): `given` --python / $DYNAMO_DEV_PYTHON, `recipe` the recipe's python, `managed` an
   * environment `dynamo-dev setup` made (its folder and release).
   */
  python?: { interpreter: string; source: 'given' | 'recipe' | 'managed'; managed: { dir: string; release: string; engine: 'vllm' | 'mocker' } | null };
  gpu: { index: number; totalMiB: number | null };
  /** `cpu` when vLLM runs on the CPU build (recipe `device: cpu`); absent for the GPU. */
  device?: 'cpu';
  /** CPU device: the host's RAM and how many cores the workers split (null when it could not be read). */
  host?: { memTotalMiB: number; cpus: number } | null;
  budget: { fractionSum: number; limit: number; budgetMiB: number | null };
  maxModelLen: number;
  router: { mode: string; kvEvents: boolean };
  disaggregated: boolean;
  frontendUrl: string;
  runDir: string;
  processes: PlannedProcess[];
  /** What the KV estimates were made of (absent in runs recorded before it existed): the GPU picture uses it. */
  memory?: { bytesPerToken: number | null; weightsMiB: number | null; overheadMiB: number | null };
}

/** The KV size line vLLM logs once the cache is allocated (FACTS §3). */
export const KV_LINE_PATTERN = 'GPU KV cache size: ([\\d,]+) tokens';

/**
 * A Dynamo worker registered its `generate` endpoint: 1.6.1 `Registered endpoint
 * 'dynamo.backend.generate' with shared TCP server on ...` (shared_tcp_endpoint), older releases
 * `Registered endpoint dyn://dynamo.backend.generate for model ...` (test/fixtures/samples/logs).
 */
export const REGISTERED_LINE = "Registered endpoint (?:'|dyn://)[\\w.-]*\\bgenerate\\b";
