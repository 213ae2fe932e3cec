import { gpuClass } from '../../plan/gpu-class.js';
import { NOT_INSTALLED_MESSAGE } from '../../host/gpu/parse-nvidia-smi.js';
import type { Gpu } from '../../host/types.js';
import { CPU_ENGINE_WAY, MOCKER_WAY, wayText } from '../ways-without-gpu.js';
import { type Check, type CheckResult, fail, pass, skip, warn } from '../types.js';

// gpu.driver: nvidia-smi answers and lists the recipe's GPU. Everything else that touches the
// GPU (memory, CUDA compatibility, leftover processes) depends on this answer.

export const describeGpu = (g: Gpu): string =>
  `GPU ${g.index}: ${g.name}, ${g.memoryTotalMiB === null ? 'memory [N/A] (unified memory)' : `${g.memoryTotalMiB} MiB`}`;

const FIXES = {
  'not-installed': 'install the NVIDIA driver (e.g. `sudo ubuntu-drivers install`, then reboot) or add the directory holding nvidia-smi to PATH',
  'no-driver': 'load the NVIDIA kernel module (`sudo modprobe nvidia`) or reinstall the driver and reboot; check `dmesg | grep -i nvidia`',
  mismatch: 'the driver was upgraded without a reboot: reboot or reload the nvidia kernel module (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia`)',
  'no-devices': 'check that the GPU is visible (`lspci | grep -i nvidia`) and, in a container, that it was started with `--gpus all`',
  error: 'run `nvidia-smi` by hand to see the error',
} as const;

/** Why the GPU checks do not apply to a `device: cpu` plan. */
export const CPU_DEVICE_SKIP = 'the recipe runs on the CPU (device: cpu, vLLM\'s CPU build): no GPU, driver or CUDA is used; cpu.memory and cpu.features judge the host';

/** Said under a missing GPU: what runs here anyway, and how (docs/setup.md). */
export const MOCKER_HERE = `without a GPU, ${wayText(MOCKER_WAY)}`;
/** The other way without a GPU: real vLLM workers on vLLM's CPU build, with what it costs (measured, docs/cpu.md). */
export const CPU_ENGINE_HERE = `or ${wayText(CPU_ENGINE_WAY)} (docs/cpu.md)`;

const check: Check = {
  id: 'gpu.driver',
  title: 'NVIDIA driver and GPU',
  async run(facts): Promise<CheckResult> {
    // vLLM's CPU build asks nothing of a GPU or its driver.
    if (facts.plan.device === 'cpu' && facts.plan.engine === 'vllm') return skip(CPU_DEVICE_SKIP);
    const g = await facts.gpu();
    const mocker = facts.plan.engine === 'mocker';
    if (!g.ok) {
      const summary = g.reason === 'not-installed' ? NOT_INSTALLED_MESSAGE : `nvidia-smi failed: ${g.message}`;
      const evidence = { reason: g.reason, message: g.message };
      // The mocker engine simulates a worker without a GPU: no GPU is not a problem for it.
      if (mocker) return skip(`no GPU, which the mocker engine does not need (${summary})`, evidence);
      // Without a GPU the main job still runs: Dynamo's mock engine needs none.
      const details = [...(g.reason === 'not-installed' ? [] : [`nvidia-smi: ${g.message}`]), MOCKER_HERE, CPU_ENGINE_HERE];
      return fail(summary, FIXES[g.reason], details, evidence);
    }
    const evidence = {
      gpus: g.gpus.map((x) => ({ index: x.index, name: x.name, memoryTotalMiB: x.memoryTotalMiB, class: gpuClass(x.name) })),
      driverVersion: g.driverVersion,
      cudaVersion: g.cudaVersion,
    };
    const details = [
      ...g.gpus.map(describeGpu),
      `driver ${g.driverVersion ?? 'unknown'}, supports CUDA up to ${g.cudaVersion ?? 'unknown'}`,
    ];
    const want = facts.plan.gpu.index;
    const gpu = g.gpus.find((x) => x.index === want);
    if (!gpu) {
      const have = g.gpus.map((x) => x.index).join(', ');
      const summary = `the recipe's GPU ${want} is not listed by nvidia-smi (it lists ${have})`;
      if (mocker) return skip(summary, evidence);
      return fail(summary, `set \`gpu: ${g.gpus[0].index}\` in the recipe (GPUs here: ${have})`, details, evidence);
    }
    const summary = `${gpu.name} (GPU ${gpu.index}), driver ${g.driverVersion ?? 'unknown'}, CUDA ${g.cudaVersion ?? 'unknown'}`;
    if (g.cudaVersion === null) {
      return warn(`${summary}: the driver's CUDA version could not be read, so cuda.compat cannot judge the build`,
        'run `nvidia-smi` and read "CUDA Version" in its header', details, evidence);
    }
    return pass(summary, evidence, details);
  },
};

export default check;
