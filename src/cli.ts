import type { Command } from 'commander';
import { createRequire } from 'node:module';
import { DiskFullError, isUserError, UserError } from './errors.js';
import { fitErrorLine, formatCommandError, stderrColumns } from './ui/error-text.js';
import type { CommandContext } from './commands/context.js';
import { refuseUnprintableStateDir, resolveStateDir } from './run/paths.js';
import { examplesFor, programFooter, toolError } from './help-text.js';
import { argParsers, RELEASE_PATTERN, type Commander, type Runner } from './cli/args.js';
import { declareRunCommands } from './cli/commands-run.js';
import { declareInspectCommands } from './cli/commands-inspect.js';
import { declareBenchCommands } from './cli/commands-bench.js';

// Nothing heavy is loaded at start-up: `--version` answers before commander is imported, and each
// command's module (and ink, zod, yaml, ...) is imported only when that command runs.

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

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
  const g = cmd.optsWithGlobals() as { json?: boolean; color?: boolean; verbose?: boolean; stateDir?: string; python?: string; release?: string };
  const json = Boolean(g.json);
  // setup's --release is the release it installs; elsewhere the environment setup made for it, which
  // outranks $DYNAMO_DEV_PYTHON (a flag over the environment) but not --python (refused together).
  const release = cmd.name() === 'setup' ? undefined : g.release;
  const color = g.color !== false && !('NO_COLOR' in process.env && process.env.NO_COLOR !== '');
  return {
    json,
    color,
    verbose: Boolean(g.verbose),
    stateDir: resolveStateDir(process.env, g.stateDir),
    python: g.python ?? (release === undefined ? process.env.DYNAMO_DEV_PYTHON || undefined : undefined),
    ...(release !== undefined ? { release } : {}),
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
      refuseUnprintableStateDir(ctx.stateDir, process.env);
      if (ctx.release !== undefined) refuseReleaseWithPython(ctx.release, (cmd.optsWithGlobals() as { python?: string }).python);
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

/** `--release X`: a release's form, and never beside --python (which of the two would run?). */
function refuseReleaseWithPython(release: string, python: string | undefined): void {
  if (!RELEASE_PATTERN.test(release)) throw new UserError(`--release: "${release}" is not a release; give X.Y.Z (e.g. 1.6.1) or X.Y (its newest X.Y.z set up)`);
  if (python !== undefined) {
    throw new UserError('--release and --python both name the interpreter: --release runs the environment `dynamo-dev setup --release X` made, --python the one given; choose one');
  }
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
  // A stream whose reader is gone (readerGone) never drains: nothing is left to wait for there.
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((r) => (s.writableNeedDrain && !s.destroyed ? s.once('drain', r) : r()))));
  process.exit(code);
}

/**
 * `dynamo-dev doctor | head -1`: the reader leaves, and the next write failed with an unhandled
 * EPIPE and a stack trace (EIO for a closed terminal). Lost output is only lost output: the command
 * finishes its work (up goes on supervising, see commands/up.ts) and exits with its own code.
 */
function readerGone(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    // The stream destroys itself on the error; later writes to it fail with ERR_STREAM_DESTROYED.
    if (err.code !== 'EPIPE' && err.code !== 'EIO' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
  });
}

export function buildProgram({ Command, InvalidArgumentError }: Commander): Command {
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

  const declare = { lazy, ...argParsers(InvalidArgumentError) };
  declareRunCommands(program, declare);
  declareInspectCommands(program, declare);
  declareBenchCommands(program, declare);

  decorateHelp(program);
  return program;
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
  readerGone(process.stdout);
  readerGone(process.stderr);
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

