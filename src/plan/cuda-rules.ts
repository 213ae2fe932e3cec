import { supportsForwardCompat, type GpuClass } from './gpu-class.js';

// CUDA version rules (FACTS §2): pure data and judgements, no I/O.

/** "12.8" -> [12, 8]; "570.133.07" -> [570, 133, 7]; garbage -> null. */
export function parseVersion(v: string | null | undefined): number[] | null {
  if (!v) return null;
  const m = /^\s*v?(\d+(?:\.\d+)*)/.exec(v);
  return m ? m[1].split('.').map(Number) : null;
}

/** Numeric, segment-wise compare; missing segments are 0. Unparseable sorts first. */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a) ?? [];
  const y = parseVersion(b) ?? [];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** "12.9" -> "cu129" (the PyTorch / vLLM wheel tag). */
export function cudaTag(cuda: string): string {
  const [maj, min] = parseVersion(cuda) ?? [0, 0];
  return `cu${maj}${min ?? 0}`;
}

/**
 * Minimum Linux driver that ships with each toolkit: the safe minimum for full features
 * (FACTS §2, from the CUDA release notes). There is no 12.7.
 */
export const TOOLKIT_DRIVER_MIN: Readonly<Record<string, string>> = {
  '11.8': '520.61.05',
  '12.0': '525.60.13',
  '12.1': '530.30.02',
  '12.2': '535.54.03',
  '12.3': '545.23.06',
  '12.4': '550.54.14',
  '12.5': '555.42.02',
  '12.6': '560.28.03',
  '12.8': '570.26',
  '12.9': '575.51.03',
  '13.0': '580.65.06',
  '13.1': '590.44.01',
};

/** Minimum driver for minor-version compatibility within a major (FACTS §2). */
export const MAJOR_DRIVER_MIN: Readonly<Record<number, string>> = {
  11: '450.80.02',
  12: '525.60.13',
  13: '580',
};

/**
 * The lowest driver that supports a CUDA version with full features: the toolkit's own entry,
 * else the next listed toolkit of the same major above it (e.g. 12.7 -> 12.8's), else null.
 */
export function minDriverFor(cuda: string): string | null {
  const v = parseVersion(cuda);
  if (!v) return null;
  const key = `${v[0]}.${v[1] ?? 0}`;
  if (TOOLKIT_DRIVER_MIN[key]) return TOOLKIT_DRIVER_MIN[key];
  const above = Object.keys(TOOLKIT_DRIVER_MIN)
    .filter((k) => parseVersion(k)![0] === v[0] && compareVersions(k, key) > 0)
    .sort(compareVersions);
  return above.length > 0 ? TOOLKIT_DRIVER_MIN[above[0]] : null;
}

/** The minor-version-compatibility floor of a major, or null when unknown. */
export function majorDriverMin(cuda: string): string | null {
  const v = parseVersion(cuda);
  return v ? (MAJOR_DRIVER_MIN[v[0]] ?? null) : null;
}

export type BuildVerdict =
  /** build <= driver CUDA version */
  | { kind: 'ok' }
  /** Same major, newer minor, on a GPU class where forward compatibility works and a driver >= the major's floor. */
  | { kind: 'minor-compat'; needDriver: string | null }
  /** Same major, newer minor, where it does not start (consumer GPU: Error 804), or the driver is under the major's floor. */
  | { kind: 'minor-newer'; needDriver: string | null }
  /** Newer major: never starts. */
  | { kind: 'major-newer'; needDriver: string | null };

/**
 * Judges a CUDA build (torch.version.cuda) against the driver's CUDA version.
 *
 * FACTS §2 says minor-version compatibility lets a newer-minor build start with reduced features,
 * which would make 12.9-on-12.8 a warning. The real case says otherwise: vLLM built for CUDA 12.9
 * on driver 570 (CUDA 12.8), a GeForce laptop GPU, died at engine start with Error 804, and worked
 * on driver 595. Error 804 is the forward-compatibility refusal: the cu129 stack bridges the gap
 * with a 12.9 forward-compat libcuda (vLLM images ship cuda-compat, and vLLM can load it itself,
 * see VLLM_ENABLE_CUDA_COMPATIBILITY), and GeForce / laptop GPUs refuse forward compatibility.
 * Dynamo's own install docs also require driver >= 575.51.03 for CUDA 12
 * (docs.nvidia.com/dynamo/latest/getting-started/local-installation). So a newer minor fails,
 * except where it can be justified to work: on data-center and Jetson GPUs, which do support the
 * forward-compat libraries, with a driver at or above the major's floor, it is a warning (it
 * starts, with reduced features: PTX newer than the driver cannot be JIT-compiled).
 */
export function judgeBuild(build: string, driverCuda: string, driverVersion: string | null, gpu: GpuClass): BuildVerdict {
  if (compareVersions(build, driverCuda) <= 0) return { kind: 'ok' };
  const needDriver = minDriverFor(build);
  const b = parseVersion(build)!;
  const d = parseVersion(driverCuda)!;
  if (b[0] > d[0]) return { kind: 'major-newer', needDriver };
  const floor = majorDriverMin(build);
  const driverOk = floor !== null && driverVersion !== null && compareVersions(driverVersion, floor) >= 0;
  if (supportsForwardCompat(gpu) && driverOk) return { kind: 'minor-compat', needDriver };
  return { kind: 'minor-newer', needDriver };
}
