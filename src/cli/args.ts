import type { CommandContext } from '../commands/context.js';

// What the command declarations (cli/commands-*.ts) share: the option value parsers and the lazy
// action wrapper cli.ts passes them (a command's module loads only when it runs).

export type Commander = typeof import('commander');
export type Runner = (ctx: CommandContext, ...rest: any[]) => Promise<number>;

export interface Declare {
  /** Wraps a lazily imported command: runs it, maps errors to exit codes (cli.ts). */
  lazy: (load: () => Promise<{ default: Runner }>) => (...args: unknown[]) => Promise<void>;
  intArg: (name: string, min?: number, max?: number) => (v: string) => number;
  numArg: (name: string, min?: number, max?: number) => (v: string) => number;
}

export function argParsers(InvalidArgumentError: Commander['InvalidArgumentError']): Pick<Declare, 'intArg' | 'numArg'> {
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
export const MAX_MS = 2 ** 31 - 1;
export const MAX_S = Math.floor(MAX_MS / 1000);
export const collect = (v: string, prev: string[] = []) => [...prev, v];
export const csv = (v: string, prev: string[] = []) => [...prev, ...v.split(',').map((s) => s.trim()).filter(Boolean)];

/** `--release` of the commands that run Dynamo: X.Y.Z (1.3.0.post1 too) or X.Y, the newest X.Y.z set up. */
export const RELEASE_HELP = 'run the environment `dynamo-dev setup --release X.Y.Z` made (X.Y: its newest X.Y.z) instead of the default choice';
export const RELEASE_PATTERN = /^\d+\.\d+(?:\.\d+(?:\.post\d+)?)?$/;

export const DEVICE_HELP = 'gpu or cpu: where vLLM runs (the recipe\'s device field; cpu needs `dynamo-dev setup --device cpu`)';
