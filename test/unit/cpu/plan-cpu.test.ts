import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPlan } from '../../../src/plan/build.js';
import { CPU_WORKER_BASE_MIB, coreBinding, idList, kvGiBFor, parseIdList } from '../../../src/plan/cpu.js';
import { cpuKernels, parseAllowedCpus, parseCpuFlags, parseMeminfo } from '../../../src/host/system/parse-cpu.js';
import { parseKvTokens } from '../../../src/diagnose/line.js';
import { classifyLine, compileLogPattern } from '../../../src/run/readiness.js';
import { recipeFrom } from '../../helpers/facts.js';
import { SAMPLES } from '../../helpers/cli.js';
import { isUserError } from '../../../src/errors.js';

// The CPU device (recipe `device: cpu`): vLLM's CPU build on host RAM and cores (src/plan/cpu.ts).
// Numbers from the real engine: a 24,104 MiB host with 2 cores (this machine, /proc/meminfo), the
// 2-layer test model at 512 bytes per token (1 GiB of KV = 2,097,152 tokens, its real KV line).

const engineLog = (name: string) => readFileSync(join(SAMPLES, '..', 'engine', name), 'utf8');
const host = { memTotalMiB: 24104, cpus: [0, 1] };
const tiny = { bytesPerToken: 512, weightsMiB: 1 };
const cpuRecipe = (r: Parameters<typeof recipeFrom>[0] = {}) => recipeFrom({ model: '/m/tiny32', device: 'cpu', maxModelLen: 1024, ...r });

describe('a CPU plan', () => {
  it('splits host RAM by the fractions: KV in whole GiB (VLLM_CPU_KVCACHE_SPACE), cores one group per worker, loopback, no CUDA variables', () => {
    const plan = buildPlan({ recipe: cpuRecipe({ workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.15 }] }), runDir: '/r', host, model: tiny });
    const [fe, a0, a1] = plan.processes;
    expect(plan.device).toBe('cpu');
    expect(a0.env).toMatchObject({ VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: '0', DYN_TCP_RPC_HOST: '127.0.0.1', DYN_EVENT_PLANE_HOST: '127.0.0.1' });
    expect(a1.env).toMatchObject({ VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: '1' });
    expect(fe.env).toMatchObject({ DYN_TCP_RPC_HOST: '127.0.0.1', DYN_EVENT_PLANE_HOST: '127.0.0.1' });
    for (const p of plan.processes) {
      expect(p.env.CUDA_VISIBLE_DEVICES).toBeUndefined();
      expect(p.env.CUDA_DEVICE_ORDER).toBeUndefined();
      expect(p.argv).not.toContain('--gpu-memory-utilization');
    }
    // The real engine's line is what readiness waits for, and 1 GiB at 512 bytes/token is its count.
    expect(a0.kvCacheGiB).toBe(1);
    expect(a0.kvTokensEstimate).toBe(2_097_152);
    expect(a0.blockSize).toBe(128);
    const kvLine = engineLog('cpu-worker-ready.log').split('\n').find((l) => l.includes('CPU KV cache size'))!;
    expect(classifyLine(kvLine, compileLogPattern(a0.ready.logPattern!))).toEqual({ kind: 'kv', tokens: 2_097_152 });
    expect(plan.budget.budgetMiB).toBe(2 * (CPU_WORKER_BASE_MIB + 1 + 1024));
  });

  it('a GPU plan keeps its CUDA variables, its fraction flag and the GPU line', () => {
    const plan = buildPlan({ recipe: recipeFrom({ model: '/m/tiny32' }), runDir: '/r', gpuTotalMiB: 8188, host });
    expect(plan.device).toBeUndefined();
    expect(plan.processes[1].env).toMatchObject({ CUDA_VISIBLE_DEVICES: '0', CUDA_DEVICE_ORDER: 'PCI_BUS_ID' });
    expect(plan.processes[1].env.VLLM_CPU_KVCACHE_SPACE).toBeUndefined();
    expect(plan.processes[1].argv).toContain('--gpu-memory-utilization');
    expect(plan.processes[1].ready.logPattern).toMatch(/^GPU KV cache size/);
  });

  it('a worker given its own --kv-cache-memory-bytes gets no VLLM_CPU_KVCACHE_SPACE (it would override the flag)', () => {
    const plan = buildPlan({ recipe: cpuRecipe({ workers: [{ role: 'agg', gpuMemoryUtilization: 0.15, args: ['--kv-cache-memory-bytes', '262144'] }] }), runDir: '/r', host, model: tiny });
    expect(plan.processes[1].env.VLLM_CPU_KVCACHE_SPACE).toBeUndefined();
    expect(plan.processes[1].env.VLLM_CPU_OMP_THREADS_BIND).toBe('0-1');
  });

  it('the mocker ignores the device: no CPU variables', () => {
    const plan = buildPlan({ recipe: recipeFrom({ engine: 'mocker', model: 'dynamo-dev/tiny', device: 'cpu' }), runDir: '/r', host });
    expect(plan.device).toBeUndefined();
    expect(plan.processes[1].env.VLLM_CPU_KVCACHE_SPACE).toBeUndefined();
  });

  it('a disaggregated recipe on the CPU is refused before anything starts, with the real reason', () => {
    const recipe = cpuRecipe({ workers: [{ role: 'prefill', gpuMemoryUtilization: 0.15 }, { role: 'decode', gpuMemoryUtilization: 0.15 }] });
    let err: unknown;
    try {
      buildPlan({ recipe, runDir: '/r', host, model: tiny, source: 'disagg-same-gpu' });
    } catch (e) {
      err = e;
    }
    expect(isUserError(err)).toBe(true);
    expect((err as Error).message).toBe(
      'disagg-same-gpu: device: cpu cannot run a disaggregated recipe: on vLLM\'s CPU build (vllm-cpu 0.31.0) the decode worker\'s VLLM::Worker dies with SIGILL (exit code -4) at its first NIXL KV transfer, tried on ai-dynamo 1.6.1 with nixl 1.4.1 (docs/cpu.md)',
    );
    // The real decode log says it so.
    expect(engineLog('cpu-disagg-nixl-decode.log')).toContain('Worker proc VllmWorker-0 died unexpectedly (exit code: -4)');
  });

  it('KV smaller than maxModelLen is refused with the numbers and a maxModelLen that fits', () => {
    const big = { bytesPerToken: 114_688, weightsMiB: 1200 }; // Qwen3-0.6B
    expect(() => buildPlan({ recipe: cpuRecipe({ maxModelLen: 16_384, workers: [{ role: 'agg', gpuMemoryUtilization: 0.15 }] }), runDir: '/r', host, model: big }))
      .toThrow('workers: agg-0 gets 1 GiB of KV cache on the CPU (VLLM_CPU_KVCACHE_SPACE) = ~9,362 tokens at 114,688 bytes/token, fewer than maxModelLen 16384');
  });
});

describe('CPU arithmetic', () => {
  it('KV GiB: the share of RAM minus the worker\'s own ~2.1 GiB and its weights, floored, at least 1', () => {
    expect(kvGiBFor(0.38, 24104)).toBe(6); // 9,160 - 2,150 = 7,010 MiB -> 6 GiB
    expect(kvGiBFor(0.15, 24104)).toBe(1);
    expect(kvGiBFor(0.01, 24104)).toBe(1);
    expect(kvGiBFor(0.38, 24104, 1200)).toBe(5);
    // The boundary: exactly 2 GiB left is 2.
    expect(kvGiBFor(1, CPU_WORKER_BASE_MIB + 2048)).toBe(2);
    expect(kvGiBFor(1, CPU_WORKER_BASE_MIB + 2047)).toBe(1);
  });

  it('cores: contiguous groups, one per worker; more workers than cores: nobind', () => {
    expect([0, 1].map((i) => coreBinding([0, 1], i, 2))).toEqual(['0', '1']);
    expect([0, 1].map((i) => coreBinding([0, 1, 2, 3, 4, 5, 6, 7], i, 2))).toEqual(['0-3', '4-7']);
    expect([0, 1, 2].map((i) => coreBinding([0, 1, 2, 3, 4, 5, 6, 7], i, 3))).toEqual(['0-1', '2-3', '4-5']);
    expect(coreBinding([0, 1], 2, 3)).toBe('nobind');
    expect(coreBinding([4, 5, 9], 0, 1)).toBe('4-5,9');
  });

  it('CPU id lists read and written as the kernel and vLLM write them', () => {
    expect(parseIdList('0-3,8,10-11')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseIdList('x')).toBeNull();
    expect(parseIdList('3-1')).toBeNull();
    expect(idList([0, 1, 2, 5])).toBe('0-2,5');
    expect(parseAllowedCpus('Name:\tnode\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t1\n')).toEqual([0, 1]);
    expect(parseAllowedCpus('Name:\tnode\n')).toBeNull();
  });

  it('/proc/meminfo in MiB; a text without MemAvailable is none', () => {
    expect(parseMeminfo('MemTotal:       24682856 kB\nMemFree:         5540860 kB\nMemAvailable:   16760372 kB\n')).toEqual({ totalMiB: 24104, availableMiB: 16367 });
    expect(parseMeminfo('MemTotal:       24682856 kB\n')).toBeNull();
  });

  it('the kernel library vLLM\'s CPU build loads, from /proc/cpuinfo flags', () => {
    const flags = parseCpuFlags('processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_bf16 amx_bf16\n');
    expect(cpuKernels(flags)).toBe('avx512-bf16');
    expect(cpuKernels(new Set(['avx2', 'avx512f']))).toBe('avx512');
    expect(cpuKernels(new Set(['avx2']))).toBe('avx2');
    expect(cpuKernels(new Set(['sse4_2']))).toBe('none');
  });

  it('diagnose reads the CPU engine\'s KV line as the GPU one', () => {
    expect(parseKvTokens('(EngineCore pid=26827) INFO 12-07 07:51:52 [kv_cache_utils.py:2464] CPU KV cache size: 2,097,152 tokens, Maximum concurrency for 1,024 tokens per request: 2048.00x')).toBe(2_097_152);
    expect(parseKvTokens('GPU KV cache size: 14,816 tokens')).toBe(14_816);
    expect(parseKvTokens('XPU KV cache size: 14,816 tokens')).toBeNull();
  });
});
