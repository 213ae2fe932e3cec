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
  };
  /** Worker publishes KV events (--kv-events-config with enable_kv_cache_events: true). */
  publishesKvEvents: boolean;
  /** Estimated KV tokens (null without GPU total or model config). */
  kvTokensEstimate: number | null;
}

export interface Plan {
  recipe: string;
  model: string;
  engine: 'vllm' | 'mocker';
  gpu: { index: number; totalMiB: number | null };
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
