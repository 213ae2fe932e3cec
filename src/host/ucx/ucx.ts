import { parseUcxInfoDevices, parseUcxLibraryPath, parseUcxVersion, UCX_INFO_NOT_FOUND } from './parse-ucx.js';
import { runProgram } from '../procs/run-program.js';
import type { UcxFacts } from '../types.js';

type Env = Readonly<Record<string, string | undefined>>;

type Outcome = { ok: true; stdout: string } | { ok: false; error: string };

async function ucxInfo(flag: string, env: Env, timeoutMs: number): Promise<Outcome> {
  // UCX_TLS is judged by us against everything UCX has, so ucx_info sees it unset.
  const childEnv: Record<string, string | undefined> = { ...env, UCX_TLS: undefined };
  const r = await runProgram('ucx_info', [flag], { env: childEnv, timeoutMs });
  if (r.notFound) return { ok: false, error: UCX_INFO_NOT_FOUND };
  if (r.timedOut) return { ok: false, error: `ucx_info ${flag} timed out after ${timeoutMs} ms` };
  if (r.exitCode !== 0) {
    const why = (r.stderr || r.stdout || r.startError || '').trim().split('\n').find((l) => l.trim()) ?? (r.signal ? `killed by ${r.signal}` : 'no output');
    return { ok: false, error: `ucx_info ${flag} failed (exit ${r.exitCode ?? r.signal}): ${why}` };
  }
  return { ok: true, stdout: r.stdout };
}

/** UCX_TLS from the environment plus what `ucx_info -d` / `-v` report (both run concurrently). */
export async function probeUcx(env: Env, timeoutMs: number): Promise<UcxFacts> {
  const tls = env.UCX_TLS !== undefined && env.UCX_TLS.trim() !== '' ? env.UCX_TLS : null;
  const [devices, version] = await Promise.all([ucxInfo('-d', env, timeoutMs), ucxInfo('-v', env, timeoutMs)]);
  let transports = null;
  let ucxInfoError: string | null = null;
  if (devices.ok) {
    transports = parseUcxInfoDevices(devices.stdout);
    if (transports.length === 0) {
      transports = null;
      ucxInfoError = 'ucx_info -d listed no transports';
    }
  } else {
    ucxInfoError = devices.error;
  }
  return { tls, transports, ucxInfoError, version: version.ok ? parseUcxVersion(version.stdout) : null,
    libraryPath: version.ok ? parseUcxLibraryPath(version.stdout) : null };
}
