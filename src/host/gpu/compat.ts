import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ldLibraryPathCompatDirs, libcudaEntries, parseLdconfig } from './parse-compat.js';
import { runProgram } from '../procs/run-program.js';
import type { CompatFacts } from '../types.js';

// Where a forward-compat libcuda.so.1 could be loaded from: LD_LIBRARY_PATH and ld.so.cache.
// ldconfig missing or failing is a fact (ldconfigError), never a throw.

type Env = Readonly<Record<string, string | undefined>>;

async function isExecutable(p: string): Promise<boolean> {
  try {
    await access(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** ldconfig on PATH first (a test can put a fake there), then /sbin/ldconfig (not on a user's PATH on Debian). */
export async function findLdconfig(env: Env): Promise<string | null> {
  const dirs = (env.PATH ?? '').split(delimiter).filter((d) => d.length > 0);
  for (const d of [...dirs, '/sbin', '/usr/sbin']) {
    const p = join(d, 'ldconfig');
    if (await isExecutable(p)) return p;
  }
  return null;
}

export async function probeCompat(env: Env, timeoutMs: number): Promise<CompatFacts> {
  const ldLibraryPathCompat = ldLibraryPathCompatDirs(env.LD_LIBRARY_PATH);
  const base = { ldLibraryPathCompat, ldconfigCompat: [] as string[], ldconfigLibcuda: [] as string[] };
  const ldconfig = await findLdconfig(env);
  if (ldconfig === null) return { ...base, ldconfigError: 'ldconfig not found on PATH or in /sbin' };
  const r = await runProgram(ldconfig, ['-p'], { env, timeoutMs });
  if (r.timedOut) return { ...base, ldconfigError: `${ldconfig} -p did not answer within ${timeoutMs} ms` };
  if (r.exitCode !== 0) {
    const why = r.stderr.trim().split('\n')[0] || r.startError || (r.signal ? `killed by ${r.signal}` : `exit code ${r.exitCode}`);
    return { ...base, ldconfigError: `${ldconfig} -p failed: ${why}` };
  }
  const { all, compat } = libcudaEntries(parseLdconfig(r.stdout));
  return { ldLibraryPathCompat, ldconfigCompat: compat, ldconfigLibcuda: all, ldconfigError: null };
}
