import { chooseRelease } from './choose-release.js';
import { archRange, buildOf, buildRunsOn, sourceBuildOf, type ReleaseBuild } from './dynamo-releases.js';

// Fix lines that name a build to install, taken from the release table (pure): a fix may name only
// a wheel that exists for a release, so it names `ai-dynamo[vllm]==X` (whose pins bring vLLM and a
// torch of the CUDA the table says), never a CUDA tag that release's vLLM is not built for (vLLM
// 0.31's PyPI wheels are CUDA 13 only: a cu128 torch under it would not load its kernels).

export interface MachineView {
  interpreter: string;
  /** The installed ai-dynamo version, when read. */
  installed: string | null;
  driverVersion: string | null;
  driverCuda: string | null;
  computeCapability: string | null;
  python: string | null;
}

const pipLine = (interp: string, release: string, force = false): string =>
  `\`${interp} -m pip install ${force ? '--force-reinstall ' : ''}"ai-dynamo[vllm]==${release}"\``;

/**
 * What to install so that the vLLM build runs here: the newest release whose build fits this
 * driver, GPU and Python (the installed one reinstalled when it is that one); null when no release
 * in the table fits (then only a driver or GPU change helps: see noFitFix).
 */
export function installFix(m: MachineView): string | null {
  const c = choose(m);
  if (!c.ok) return null;
  const b = c.build!;
  const what = `vLLM ${b.vllm}, torch ${b.torch}, CUDA ${b.cuda}`;
  if (m.installed !== null && buildOf(m.installed)?.release === b.release) {
    return `reinstall ai-dynamo ${b.release}'s own build (${what}): ${pipLine(m.interpreter, b.release, true)}`;
  }
  return `install ai-dynamo ${b.release}, the newest release whose build runs on this driver and GPU (${what}): ${pipLine(m.interpreter, b.release)}`;
}

/** installFix, else what would make a release fit (a driver, a newer GPU), said as a fix. */
export function fitFix(m: MachineView): string {
  const fix = installFix(m);
  if (fix !== null) return fix;
  const c = choose(m);
  return c.ok ? '' : `no ai-dynamo release has a vLLM build for this machine (${c.reason.replace(/^no release in the table runs here: /, '')}): ${c.would[0]}`;
}

const choose = (m: MachineView) => chooseRelease(
  { driverVersion: m.driverVersion, driverCuda: m.driverCuda, computeCapability: m.computeCapability, python: m.python },
  { engine: 'vllm' },
);

/**
 * The table's build of the installed release when the installed torch is that build's; null
 * otherwise. A release known from source only (1.7) has its build facts too: someone installed it elsewhere.
 */
export function installedBuild(installed: string | null, torchVersion: string | null): ReleaseBuild | null {
  const b = buildOf(installed) ?? sourceBuildOf(installed);
  if (!b || !torchVersion) return null;
  return torchVersion === b.torch || torchVersion.startsWith(`${b.torch}+`) ? b : null;
}

/** Why the installed release's build has no kernels for this GPU; null when it has (or either is unknown). */
export function archGap(b: ReleaseBuild | null, cc: string | null): string | null {
  if (!b || !cc || buildRunsOn(b, cc)) return null;
  return `ai-dynamo ${b.release}'s torch ${b.torch} and vLLM ${b.vllm} have kernels for ${archRange(b)} only`;
}
