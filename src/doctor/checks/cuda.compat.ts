import { CPU_DEVICE_SKIP } from './gpu.driver.js';
import { judgeBuild, minDriverFor } from '../../plan/cuda-rules.js';
import { gpuClass } from '../../plan/gpu-class.js';
import { isCompatDir } from '../../host/gpu/parse-compat.js';
import { archGap, fitFix, installedBuild, installFix, type MachineView } from '../../plan/release-fixes.js';
import { type Check, type CheckResult, PYTHON_PROBE_TIMEOUT_MS, fail, pass, skip, warn } from '../types.js';

// cuda.compat: the Error 804 / 803 family (FACTS §2) before a worker dies of it at engine start:
// a CUDA build newer than the driver, forward-compat libraries on a GPU that refuses them, and a
// driver upgraded without a reboot.

interface Finding {
  status: 'warn' | 'fail';
  summary: string;
  details: string[];
  fix: string;
}

const E804 = 'Error 804: forward compatibility was attempted on non supported HW';

/** cuda-compat package name from its dir: /usr/local/cuda-12.9/compat -> cuda-compat-12-9. */
function compatPackage(dir: string): string {
  const m = /cuda-(\d+)\.(\d+)/.exec(dir);
  return m ? `cuda-compat-${m[1]}-${m[2]}` : 'cuda-compat-*';
}

function compatFix(ldLibraryPath: string | undefined, ldDirs: string[], ldconfigPaths: string[]): string {
  const parts: string[] = [];
  if (ldDirs.length > 0) {
    const kept = (ldLibraryPath ?? '').split(':').filter((s) => s.length > 0 && !isCompatDir(s.replace(/\/+$/, '')));
    parts.push(`remove ${ldDirs.join(', ')} from LD_LIBRARY_PATH (\`export LD_LIBRARY_PATH=${kept.join(':')}\`${kept.length === 0 ? ' or `unset LD_LIBRARY_PATH`' : ''})`);
  }
  if (ldconfigPaths.length > 0) {
    const pkgs = [...new Set(ldconfigPaths.map(compatPackage))].join(' ');
    parts.push(`uninstall the forward-compat package (\`sudo apt remove ${pkgs}\`, or delete its /etc/ld.so.conf.d/*compat* entry and run \`sudo ldconfig\`)`);
  }
  parts.push('set VLLM_ENABLE_CUDA_COMPATIBILITY=0 for the workers so vLLM does not load them itself');
  return parts.join('; ');
}

const check: Check = {
  id: 'cuda.compat',
  title: 'CUDA build vs driver (Error 804)',
  minTimeoutMs: PYTHON_PROBE_TIMEOUT_MS,
  async run(facts): Promise<CheckResult> {
    if (facts.plan.engine === 'mocker') return skip('the mocker engine does not initialise CUDA');
    if (facts.plan.device === 'cpu') return skip(CPU_DEVICE_SKIP);
    const g = await facts.gpu();
    if (!g.ok) {
      if (g.reason === 'mismatch') {
        return fail(
          'Driver/library version mismatch: the NVIDIA driver was upgraded without a reboot; new CUDA processes fail (often with Error 804)',
          'reboot or reload the nvidia kernel module (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia`)',
          [`nvidia-smi: ${g.message}`],
          { reason: g.reason, message: g.message },
        );
      }
      return skip('no GPU facts: see gpu.driver', { reason: g.reason });
    }
    // Judge the GPU the workers will run on, never a stand-in: another GPU's class (data-center
    // vs GeForce) would turn the Error 804 verdict around. gpu.driver fails the missing index.
    const gpu = g.gpus.find((x) => x.index === facts.plan.gpu.index);
    if (!gpu) return skip(`the recipe's GPU ${facts.plan.gpu.index} is not listed by nvidia-smi: see gpu.driver`, { gpu: facts.plan.gpu.index });
    const cls = gpuClass(gpu.name);
    const [compat, py] = await Promise.all([facts.compat(), facts.python()]);
    const torch = py.ok ? py.modules.torch : undefined;
    const build = py.ok && torch?.ok ? py.torchCuda : null;
    const installed = py.ok && py.modules.dynamo?.ok ? py.modules.dynamo.version : null;
    const view: MachineView = {
      interpreter: py.interpreter, installed, driverVersion: g.driverVersion, driverCuda: g.cudaVersion,
      computeCapability: gpu.computeCap, python: py.ok ? py.pythonVersion : null,
    };
    const evidence: Record<string, unknown> = {
      gpu: gpu.name, gpuClass: cls, computeCapability: gpu.computeCap, dynamoVersion: installed, driverVersion: g.driverVersion, driverCuda: g.cudaVersion, torchCuda: build,
      torchVersion: torch?.version ?? null, ldLibraryPathCompat: compat.ldLibraryPathCompat,
      ldconfigCompat: compat.ldconfigCompat, ldconfigLibcuda: compat.ldconfigLibcuda, ldconfigError: compat.ldconfigError,
    };
    const findings: Finding[] = [];

    // Forward-compat libraries: the intended path on data-center GPUs and Jetson, Error 804 on GeForce/laptop.
    const compatSources = [
      ...compat.ldLibraryPathCompat.map((d) => `LD_LIBRARY_PATH contains ${d}`),
      ...compat.ldconfigCompat.map((p) => `ld.so.cache (ldconfig -p) has ${p}`),
    ];
    if (compatSources.length > 0 && (cls === 'consumer' || cls === 'unknown')) {
      const fix = compatFix(facts.env.LD_LIBRARY_PATH, compat.ldLibraryPathCompat, compat.ldconfigCompat);
      if (cls === 'consumer') {
        findings.push({
          status: 'fail',
          summary: `CUDA forward-compat libraries are on the load path of ${gpu.name}, a GeForce/laptop GPU that refuses them: CUDA init fails with "${E804}"`,
          details: compatSources,
          fix,
        });
      } else {
        findings.push({
          status: 'warn',
          summary: `CUDA forward-compat libraries are on the load path of ${gpu.name}; only data-center GPUs and select NGC-ready RTX SKUs accept them (otherwise ${E804})`,
          details: compatSources,
          fix: `if workers fail with Error 804: ${fix}`,
        });
      }
    } else if (compat.ldconfigLibcuda.length >= 2 && cls === 'consumer') {
      // (No compat source here: a consumer GPU with one took the branch above.)
      findings.push({
        status: 'warn',
        summary: `ld.so.cache lists ${compat.ldconfigLibcuda.length} libcuda.so.1: one may be a forward-compat copy, which ${gpu.name} refuses (Error 804)`,
        details: compat.ldconfigLibcuda.map((p) => `libcuda.so.1 => ${p}`),
        fix: 'keep only the driver\'s libcuda.so.1: find the extra one with `ldconfig -p | grep libcuda.so.1`, remove its /etc/ld.so.conf.d entry and run `sudo ldconfig`',
      });
    }

    // The Python env's CUDA build against the driver's CUDA version.
    let buildNote: string | null = null;
    if (!py.ok) buildNote = `the Python env could not be asked (${py.error}): see python.env`;
    else if (!torch?.ok) buildNote = 'torch is not importable, so its CUDA build is unknown: see python.env';
    else if (build === null) {
      findings.push({
        status: 'warn',
        summary: `torch${torch.version ? ` ${torch.version}` : ''} is a CPU build (torch.version.cuda is None): vLLM cannot use the GPU`,
        details: [`interpreter: ${py.interpreter}`],
        fix: fitFix(view),
      });
    } else if (g.cudaVersion === null) {
      findings.push({
        status: 'warn',
        summary: `torch is built for CUDA ${build} but the driver's CUDA version is unknown (nvidia-smi did not print it)`,
        details: [`driver ${g.driverVersion ?? 'unknown'}`],
        fix: `make sure the driver supports CUDA ${build}: driver >= ${minDriverFor(build) ?? 'the one bundled with that toolkit'}`,
      });
    } else {
      const v = judgeBuild(build, g.cudaVersion, g.driverVersion, cls);
      const both = `torch is built for CUDA ${build} (${torch.version ?? 'torch'}) but driver ${g.driverVersion ?? '?'} supports CUDA ${g.cudaVersion}`;
      const driverFix = v.kind === 'ok' ? '' : `install an NVIDIA driver >= ${v.needDriver ?? `one supporting CUDA ${build}`} (CUDA ${build})`;
      const alt = installFix(view);
      const buildFix = alt === null ? '' : `or ${alt}`;
      const details = [`GPU ${gpu.index}: ${gpu.name}`, `driver ${g.driverVersion ?? '?'} -> CUDA ${g.cudaVersion}`, `${py.interpreter}: torch ${torch.version ?? '?'}, torch.version.cuda ${build}`];
      if (v.kind === 'minor-compat') {
        findings.push({
          status: 'warn',
          summary: `${both}: it starts through minor-version/forward compatibility on this data-center GPU, with reduced features (newer PTX cannot be JIT-compiled)`,
          details,
          fix: [driverFix, buildFix].filter(Boolean).join(' '),
        });
      } else if (v.kind === 'minor-newer') {
        const how = cls === 'consumer' || cls === 'unknown'
          ? `vLLM fails at engine start with "${E804}"`
          : 'vLLM fails at engine start ("The NVIDIA driver on your system is too old")';
        findings.push({ status: 'fail', summary: `${both}: ${how}`, details, fix: [driverFix, buildFix].filter(Boolean).join(', ') });
      } else if (v.kind === 'major-newer') {
        findings.push({
          status: 'fail',
          summary: `${both}: a CUDA ${build.split('.')[0]}.x build never runs on a CUDA ${g.cudaVersion.split('.')[0]}.x driver (CUDA init fails: driver too old, or Error 804)`,
          details,
          fix: [driverFix, buildFix].filter(Boolean).join(', '),
        });
      }
    }

    // A GPU older than the installed release's build: torch and vLLM have no kernel for it ("no
    // kernel image is available for execution on the device" at the first kernel launch).
    const gap = torch?.ok ? archGap(installedBuild(installed, torch.version), gpu.computeCap) : null;
    if (gap !== null) {
      findings.push({
        status: 'fail',
        summary: `${gpu.name} has compute capability ${gpu.computeCap}, older than the installed build: ${gap} (CUDA error: no kernel image is available for execution on the device)`,
        details: [`GPU ${gpu.index}: ${gpu.name}, compute capability ${gpu.computeCap}`, `${py.ok ? py.interpreter : 'python'}: ai-dynamo ${installed}, torch ${torch?.version ?? '?'}`],
        fix: fitFix(view),
      });
    }

    const fails = findings.filter((f) => f.status === 'fail');
    const worst = fails[0] ?? findings[0];
    if (worst) {
      const details = findings.flatMap((f) => (f === worst ? f.details : [f.summary, ...f.details]));
      const fix = [...new Set((fails.length > 0 ? fails : findings).map((f) => f.fix))].join('; ');
      return worst.status === 'fail' ? fail(worst.summary, fix, details, evidence) : warn(worst.summary, fix, details, evidence);
    }
    if (buildNote !== null) return skip(`${buildNote}; no forward-compat libraries found`, evidence);
    // Without ldconfig only LD_LIBRARY_PATH was searched: say so rather than vouch for ld.so.cache.
    const where = compat.ldconfigError ? `no forward-compat libraries on LD_LIBRARY_PATH (ld.so.cache not read: ${compat.ldconfigError})` : 'no forward-compat libraries on the load path';
    return pass(
      `torch CUDA ${build} <= driver CUDA ${g.cudaVersion} (driver ${g.driverVersion ?? '?'}); ${where}`,
      evidence,
      [`GPU ${gpu.index}: ${gpu.name} (${cls})`, ...(compat.ldconfigError ? [`ldconfig: ${compat.ldconfigError}`] : [])],
    );
  },
};

export default check;
