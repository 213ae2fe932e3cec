import {
  classifyFailure, COMPUTE_APPS_FIELDS, GPU_QUERY_FIELDS, NOT_INSTALLED_MESSAGE, parseComputeApps, parseCudaVersion, parseDriverVersion, parseQueryGpu,
} from './parse-nvidia-smi.js';
import { runProgram } from '../procs/run-program.js';
import type { ComputeAppsFacts, GpuFacts } from '../types.js';

// The nvidia-smi adapter. Never throws: a missing program, a dead driver, a timeout are facts.

export { NOT_INSTALLED_MESSAGE };

type Env = Readonly<Record<string, string | undefined>>;


interface Ran {
  /** null: the program could not be started (ENOENT and friends). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  notFound: boolean;
  timedOut: boolean;
  spawnError: string | null;
}

async function runSmi(args: string[], env: Env, timeoutMs: number): Promise<Ran> {
  // LC_ALL=C keeps numbers free of locale separators; PATH decides which nvidia-smi runs.
  const r = await runProgram('nvidia-smi', args, { env: { ...env, LC_ALL: 'C' }, timeoutMs });
  return {
    exitCode: r.exitCode,
    stdout: r.stdout,
    stderr: r.stderr,
    notFound: r.notFound,
    timedOut: r.timedOut,
    spawnError: r.startError !== null && !r.notFound ? r.startError : null,
  };
}

/** Turns a failed run into a failure fact; null when the run succeeded. */
function failureOf(r: Ran, timeoutMs: number): { reason: 'not-installed' | 'no-driver' | 'mismatch' | 'no-devices' | 'error'; message: string } | null {
  if (r.notFound) return { reason: 'not-installed', message: NOT_INSTALLED_MESSAGE };
  if (r.timedOut) return { reason: 'error', message: `nvidia-smi did not answer within ${timeoutMs} ms` };
  if (r.spawnError !== null) return { reason: 'error', message: `could not run nvidia-smi: ${r.spawnError}` };
  if (r.exitCode !== 0) return classifyFailure(`${r.stdout}\n${r.stderr}`, r.exitCode);
  return null;
}

/**
 * GPUs, driver version and the driver's CUDA version. The query and the CUDA-version call run
 * concurrently; the CUDA version comes from `--version` and, on drivers whose `--version` does
 * not print it, from the plain table header.
 */
export async function probeGpu(env: Env, timeoutMs: number): Promise<GpuFacts> {
  const query = ['--query-gpu=' + GPU_QUERY_FIELDS.join(','), '--format=csv,noheader,nounits'];
  const [q, v] = await Promise.all([runSmi(query, env, timeoutMs), runSmi(['--version'], env, timeoutMs)]);
  const failed = failureOf(q, timeoutMs);
  if (failed) return { ok: false, ...failed };
  const gpus = parseQueryGpu(q.stdout);
  if (gpus.length === 0) {
    const text = `${q.stdout}\n${q.stderr}`.trim();
    if (/No devices were found/i.test(text) || text === '') {
      return { ok: false, reason: 'no-devices', message: 'No devices were found' };
    }
    return { ok: false, reason: 'error', message: `could not read nvidia-smi --query-gpu output: ${text.split('\n')[0]}` };
  }
  let cudaVersion = v.exitCode === 0 ? parseCudaVersion(v.stdout) : null;
  let driverFromHeader = v.exitCode === 0 ? parseDriverVersion(v.stdout) : null;
  if (cudaVersion === null) {
    const plain = await runSmi([], env, timeoutMs);
    if (plain.exitCode === 0) {
      cudaVersion = parseCudaVersion(plain.stdout);
      driverFromHeader ??= parseDriverVersion(plain.stdout);
    }
  }
  return { ok: true, gpus, driverVersion: gpus.find((g) => g.driverVersion)?.driverVersion ?? driverFromHeader, cudaVersion };
}

/** Processes holding a compute context, on every GPU (with their GPU's uuid when the driver says). */
export async function probeComputeApps(env: Env, timeoutMs: number): Promise<ComputeAppsFacts> {
  const r = await runSmi(['--query-compute-apps=' + COMPUTE_APPS_FIELDS.join(','), '--format=csv,noheader,nounits'], env, timeoutMs);
  const failed = failureOf(r, timeoutMs);
  if (failed) return { ok: false, message: failed.message };
  return { ok: true, apps: parseComputeApps(r.stdout) };
}
