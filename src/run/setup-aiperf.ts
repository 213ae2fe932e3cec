import { join } from 'node:path';
import { EXIT } from '../errors.js';
import * as installer from '../host/python/installer.js';
import { AIPERF_VERSION, aiperfFolderName, pythonRunsAiperf, type InstallTools } from '../plan/setup-install.js';
import { onStopSignals } from './signals.js';
import type { SetupScope } from './setup-events.js';

// AIPerf for bench, in an environment of its own beside Dynamo's (issue 31): its pins clash with
// Dynamo's (plan/setup-install.ts). A Python that cannot run it, or a failed install, is said and
// setup still succeeds for Dynamo; bench then says how to get it.

/** AIPerf's environment, beside Dynamo's. */
export const aiperfDir = (s: SetupScope): string => join(s.envsRoot, aiperfFolderName());

/** Finds or makes AIPerf's environment; resolves to setup's exit code (a failed install: 1, interrupted: 130). */
export async function withAiperf(s: SetupScope, base0: installer.BasePython | null): Promise<number> {
  const dir = aiperfDir(s);
  const have = installer.readAiperfEnv(dir);
  if (have) {
    s.emit({ event: 'aiperf', ok: true, alreadyComplete: true, dir, python: have.python, version: have.version });
    return EXIT.ok;
  }
  const b = base0 ?? (await installer.findBasePython(s.env)).found;
  if (!b || !pythonRunsAiperf(b.version)) {
    s.emit({ event: 'aiperf', ok: false, cause: `AIPerf (for bench) needs Python 3.11-3.13${b ? `; ${b.path} is ${b.version}` : ''}: not installed` });
    return EXIT.ok;
  }
  const uv = installer.onPath('uv', s.env);
  const tools: InstallTools = { installer: uv ? 'uv' : 'pip', uv: uv ?? undefined, basePython: b.path, dir };
  const lock = installer.lockFolder(dir, s.env);
  if (!lock.ok) {
    s.emit({ event: 'aiperf-busy', dir, heldBy: 'heldBy' in lock ? lock.heldBy : null, installerLeft: 'installerLeft' in lock ? lock.installerLeft : null });
    return EXIT.ok;
  }
  const abort = new AbortController();
  const offSignals = onStopSignals(() => abort.abort());
  try {
    s.emit({ event: 'aiperf-installing', dir, version: AIPERF_VERSION });
    const r = await installer.buildAiperfEnvironment({ dir, tools, env: s.env, signal: abort.signal, onStep: (label) => s.emit({ event: 'aiperf-step', label }) });
    if (!r.ok) {
      s.emit({ event: 'aiperf', ok: false, cause: r.cause, tail: r.tail, log: r.log });
      return abort.signal.aborted ? EXIT.interrupted : EXIT.failed;
    }
    s.emit({ event: 'aiperf', ok: true, alreadyComplete: false, dir, python: r.python, version: AIPERF_VERSION });
    return EXIT.ok;
  } finally {
    offSignals();
    lock.release();
  }
}
