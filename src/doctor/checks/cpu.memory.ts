import { CPU_WORKER_BASE_MIB, kvGiBFor } from '../../plan/cpu.js';
import type { PlannedProcess } from '../../plan/types.js';
import { type Check, type CheckResult, fail, pass, skip, warn } from '../types.js';

// cpu.memory: the host RAM a `device: cpu` plan needs, against what the kernel says is available.
// Each CPU worker holds its own processes (~2.1 GiB measured: python -m dynamo.vllm, VLLM::EngineCore,
// VLLM::Worker, plan/cpu.ts), its weights and its whole KV cache (VLLM_CPU_KVCACHE_SPACE GiB).
// vLLM checks only the KV part, and only at its allocation (`Available memory on node 0 (...) on
// kv cache allocation is less than requested memory for kv`, vllm/v1/worker/cpu_worker.py), after
// a minute or more of start-up; a plan the machine cannot hold is said here, before anything starts.

/** The frontend's own RSS (~130 MB measured with ai-dynamo 1.6.1). */
export const FRONTEND_MIB = 150;
/** Above this share of what is available, the machine would swap or kill under the first load. */
const TIGHT = 0.9;

const gib = (mib: number) => `${(mib / 1024).toFixed(1)} GiB`;

/** A CPU worker's KV GiB: what its environment says, else what the plan gave it, else its fraction's share. */
export function workerKvGiB(p: PlannedProcess, memTotalMiB: number): number {
  const set = Number(p.env.VLLM_CPU_KVCACHE_SPACE);
  if (Number.isInteger(set) && set > 0) return set;
  return p.kvCacheGiB ?? kvGiBFor(p.gpuMemoryUtilization ?? 0, memTotalMiB);
}

const check: Check = {
  id: 'cpu.memory',
  title: 'Host RAM for the CPU workers',
  async run(facts): Promise<CheckResult> {
    const { plan } = facts;
    if (plan.device !== 'cpu' || plan.engine !== 'vllm') return skip('the recipe does not run vLLM on the CPU (device: cpu)');
    const h = await facts.hostCpu();
    const weights = Math.round(plan.memory?.weightsMiB ?? 0);
    const workers = plan.processes.filter((p) => p.role !== 'frontend');
    const per = workers.map((p) => ({ name: p.name, kvGiB: workerKvGiB(p, h.memTotalMiB) }));
    const needMiB = FRONTEND_MIB + per.reduce((s, w) => s + CPU_WORKER_BASE_MIB + weights + w.kvGiB * 1024, 0);
    const details = [
      ...per.map((w) => `${w.name}: ~${gib(CPU_WORKER_BASE_MIB)} of processes + ${weights ? `${gib(weights)} of weights + ` : ''}${w.kvGiB} GiB of KV (VLLM_CPU_KVCACHE_SPACE=${w.kvGiB})`),
      `frontend: ~${FRONTEND_MIB} MiB`,
      `host: ${gib(h.availableMiB)} available of ${gib(h.memTotalMiB)} (/proc/meminfo MemAvailable)`,
    ];
    const evidence = { needMiB, availableMiB: h.availableMiB, totalMiB: h.memTotalMiB, workers: per, workerBaseMiB: CPU_WORKER_BASE_MIB, weightsMiB: weights };
    const summary = `${workers.length} CPU worker${workers.length === 1 ? ' needs' : 's need'} ~${gib(needMiB)}; ${gib(h.availableMiB)} of ${gib(h.memTotalMiB)} is available`;
    // A live run judged by its own plan holds that memory already: available is what is left.
    if (facts.planRunId !== null) return pass(`the run holds its ~${gib(needMiB)} already; ${gib(h.availableMiB)} more is available`, evidence, details);
    const kvMost = Math.max(...per.map((w) => w.kvGiB));
    const fix = [
      kvMost > 1 ? 'give each worker less KV (a smaller workers.N.gpuMemoryUtilization: KV is that share of RAM minus ~2.1 GiB, at least 1 GiB)' : null,
      workers.length > 1 ? 'run fewer workers (--set workers.0.replicas=1)' : null,
      'or free memory (other engines, other runs: `dynamo-dev status`)',
    ].filter(Boolean).join('; ');
    if (needMiB > h.availableMiB) return fail(`${summary}: short by ~${gib(needMiB - h.availableMiB)}`, fix, details, evidence);
    if (needMiB > h.availableMiB * TIGHT) return warn(`${summary}: less than 10% would be left`, fix, details, evidence);
    return pass(summary, evidence, details);
  },
};

export default check;
