import { compareVersions as compareNums, TOOLKIT_DRIVER_MIN } from './cuda-rules.js';
import { archRange, archsRun, BUILDS, buildOf, buildRunsOn, compareVersions, parseCapability, type ReleaseBuild } from './dynamo-releases.js';

// Which Dynamo release this machine can run (pure): machine facts + the release table -> the newest
// release whose pinned vLLM/torch build runs here, or exactly why none does and what would. `setup`
// installs what it says; doctor's cuda.compat names the same releases.

export interface MachineFacts {
  /** The NVIDIA driver version (nvidia-smi), or null when there is no driver / no GPU. */
  driverVersion: string | null;
  /** The CUDA version the driver accepts (nvidia-smi's "CUDA Version"); derived from the driver when absent. */
  driverCuda?: string | null;
  /** Compute capability of the GPU the workers will use ("8.6"); null when unknown. */
  computeCapability?: string | null;
  /** The Python that will build the environment ("3.12.3"); null when unknown. */
  python?: string | null;
}

export interface Wishes {
  /** --release X.Y.Z */
  release?: string | null;
  /** --engine; default: vllm with a GPU, mocker without. */
  engine?: 'vllm' | 'mocker' | null;
}

export type Choice =
  | {
    ok: true;
    release: string;
    engine: 'vllm' | 'mocker';
    /** The build installed for the vllm engine; null for the mocker (Dynamo alone). */
    build: ReleaseBuild | null;
    /** One sentence: why this release. */
    reason: string;
  }
  | {
    ok: false;
    engine: 'vllm' | 'mocker';
    /** One sentence: why nothing fits. */
    reason: string;
    /** What would make one fit: a driver version, an older release, another GPU or Python, the mocker. */
    would: string[];
  };

/** The CUDA version a driver accepts, from NVIDIA's table (the newest toolkit whose minimum it meets). */
export function cudaForDriver(driver: string): string | null {
  let best: string | null = null;
  for (const [cuda, min] of Object.entries(TOOLKIT_DRIVER_MIN)) {
    if (compareNums(driver, min) >= 0 && (best === null || compareNums(cuda, best) > 0)) best = cuda;
  }
  return best;
}

const newestFirst = (): ReleaseBuild[] => [...BUILDS].sort((a, b) => compareVersions(b.release, a.release));
const pyMinor = (v: string): string => v.split('.').slice(0, 2).join('.');
const pyOk = (py: string | null, b: ReleaseBuild): boolean =>
  py === null || (compareNums(pyMinor(py), b.python.min) >= 0 && compareNums(pyMinor(py), b.python.below) < 0);

/** Why a build does not run here; null when it does. */
export function whyNot(b: ReleaseBuild, m: { cuda: string | null; cc: string | null; python: string | null; driver: string | null }): string | null {
  if (m.cc !== null && !buildRunsOn(b, m.cc)) {
    return `its torch ${b.torch} and vLLM ${b.vllm} have kernels for ${archRange(b)}, not for compute capability ${m.cc}`;
  }
  if (m.cuda === null || compareNums(b.cuda, m.cuda) > 0) {
    return `vLLM ${b.vllm} and torch ${b.torch} need CUDA ${b.cuda} (driver >= ${b.minDriver})${m.driver ? `, driver ${m.driver} accepts CUDA ${m.cuda ?? 'unknown'}` : ''}`;
  }
  if (!pyOk(m.python, b)) return `vLLM ${b.vllm} needs Python >= ${b.python.min} and < ${b.python.below}, this is Python ${m.python}`;
  return null;
}

const MOCKER_NOTE = 'the mocker engine runs without a GPU (`--engine mocker`)';

export function chooseRelease(machine: MachineFacts, wishes: Wishes = {}): Choice {
  const py = machine.python ?? null;
  const newest = newestFirst();
  const engine = wishes.engine ?? (machine.driverVersion === null ? 'mocker' : 'vllm');
  const wanted = wishes.release ?? null;
  if (wanted !== null && !buildOf(wanted)) {
    return { ok: false, engine, reason: `the release table has no ai-dynamo ${wanted}`, would: [`a release it has: ${newest.map((b) => b.release).join(', ')}`] };
  }

  if (engine === 'mocker') {
    if (py !== null && compareNums(pyMinor(py), '3.10') < 0) {
      return { ok: false, engine, reason: `ai-dynamo needs Python >= 3.10, this is Python ${py}`, would: ['Python 3.10 or newer (`--python`)'] };
    }
    const release = wanted ? buildOf(wanted)!.release : newest[0].release;
    const why = machine.driverVersion === null && !wishes.engine
      ? 'no NVIDIA GPU here: Dynamo alone (frontend, router and mocker), for the mocker engine; vLLM needs a GPU'
      : 'Dynamo alone (frontend, router and mocker) for the mocker engine, which needs no GPU';
    return { ok: true, engine, release, build: null, reason: `ai-dynamo ${release}${wanted ? ' as asked' : ', the newest release'}: ${why}` };
  }

  if (machine.driverVersion === null) {
    return {
      ok: false, engine, reason: 'the vllm engine needs an NVIDIA GPU and driver, and none was found',
      would: ['an NVIDIA driver (nvidia-smi must list the GPU)', MOCKER_NOTE],
    };
  }
  const facts = {
    driver: machine.driverVersion,
    cuda: machine.driverCuda ?? cudaForDriver(machine.driverVersion),
    cc: machine.computeCapability && parseCapability(machine.computeCapability) ? machine.computeCapability : null,
    python: py,
  };
  const fits = newest.filter((b) => whyNot(b, facts) === null);
  const ccNote = facts.cc === null ? ' (GPU compute capability unknown: not checked)' : '';

  if (wanted !== null) {
    const b = buildOf(wanted)!;
    const no = whyNot(b, facts);
    if (no === null) return { ok: true, engine, release: b.release, build: b, reason: `ai-dynamo ${b.release} as asked: ${runsText(b, facts)}${ccNote}` };
    return { ok: false, engine, reason: `ai-dynamo ${b.release} does not run here: ${no}`, would: wouldFor([b], fits, facts) };
  }
  if (fits.length > 0) {
    const b = fits[0];
    const skipped = newest.filter((x) => compareVersions(x.release, b.release) > 0);
    const because = skipped.length > 0 ? `; ${skipped.at(-1)!.release} and newer do not: ${whyNot(skipped.at(-1)!, facts)}` : '';
    return { ok: true, engine, release: b.release, build: b, reason: `ai-dynamo ${b.release}, the newest release that runs here: ${runsText(b, facts)}${because}${ccNote}` };
  }
  return { ok: false, engine, reason: `no release in the table runs here: ${noneReason(newest, facts)}`, would: wouldFor(newest, [], facts) };
}

function runsText(b: ReleaseBuild, m: { cuda: string | null; cc: string | null; driver: string | null }): string {
  return `vLLM ${b.vllm} with torch ${b.torch} needs CUDA ${b.cuda} (driver ${m.driver} accepts ${m.cuda})${m.cc ? ` and has kernels for compute capability ${m.cc} (${archRange(b)})` : ''}`;
}

/** The one cause that blocks every release: the GPU, else the driver, else Python. */
function noneReason(all: ReleaseBuild[], m: { cuda: string | null; cc: string | null; python: string | null; driver: string | null }): string {
  if (m.cc !== null && !all.some((b) => buildRunsOn(b, m.cc!))) {
    const lowest = [...all].sort((a, b) => compareNums(lowestArch(a), lowestArch(b)))[0];
    return `no build has kernels for compute capability ${m.cc} (the oldest GPUs any supports: ${archRange(lowest)}, ai-dynamo ${lowest.release} and older)`;
  }
  const onGpu = all.filter((b) => m.cc === null || buildRunsOn(b, m.cc));
  const lowestCuda = [...onGpu].sort((a, b) => compareNums(a.cuda, b.cuda))[0];
  if (m.cuda === null || compareNums(lowestCuda.cuda, m.cuda) > 0) {
    return `driver ${m.driver} accepts CUDA ${m.cuda ?? 'unknown'}, and every build${m.cc ? ` for compute capability ${m.cc}` : ''} needs CUDA ${lowestCuda.cuda} or newer (driver >= ${lowestCuda.minDriver})`;
  }
  return `Python ${m.python}: the builds this driver and GPU run need Python < ${lowestCuda.python.below}`;
}

const lowestArch = (b: ReleaseBuild): string => b.torchArchs.find((a) => archsRun(b.vllmArchs, a)) ?? '99.0';

/** What would make a build run: the driver each blocked release needs, an older release that fits, another GPU, the mocker. */
function wouldFor(blocked: ReleaseBuild[], fits: ReleaseBuild[], m: { cuda: string | null; cc: string | null; python: string | null; driver: string | null }): string[] {
  const out: string[] = [];
  const onGpu = blocked.filter((b) => m.cc === null || buildRunsOn(b, m.cc));
  // The newest release per distinct minimum driver: "driver >= 580.65.06 for 1.6.1".
  const byDriver = new Map<string, ReleaseBuild>();
  for (const b of onGpu) if (pyOk(m.python, b) && !byDriver.has(b.minDriver)) byDriver.set(b.minDriver, b);
  for (const [driver, b] of [...byDriver].sort((a, b) => compareNums(b[0], a[0]))) {
    if (m.cuda === null || compareNums(b.cuda, m.cuda) > 0) out.push(`NVIDIA driver >= ${driver} (CUDA ${b.cuda}) for ai-dynamo ${b.release} (vLLM ${b.vllm})`);
  }
  if (fits.length > 0) out.push(`an older release that runs here: \`--release ${fits[0].release}\` (vLLM ${fits[0].vllm}, CUDA ${fits[0].cuda})`);
  if (m.cc !== null && onGpu.length === 0 && fits.length === 0) {
    const lowest = [...blocked].map(lowestArch).sort(compareNums)[0];
    out.push(`a GPU of compute capability ${lowest} or newer (this one is ${m.cc})`);
  }
  const pyBlocked = onGpu.filter((b) => !pyOk(m.python, b));
  if (pyBlocked.length > 0) out.push(`Python < ${pyBlocked[0].python.below} for ai-dynamo ${pyBlocked[0].release} (\`--python\`)`);
  out.push(MOCKER_NOTE);
  return out;
}
