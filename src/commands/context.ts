import type { Writable } from 'node:stream';

/** What every command receives from the CLI: global flags resolved once. */
export interface CommandContext {
  json: boolean;
  color: boolean;
  verbose: boolean;
  /** Resolved state directory (--state-dir, $DYNAMO_DEV_HOME, XDG, ~/.local/state). */
  stateDir: string;
  /** --python, else $DYNAMO_DEV_PYTHON; undefined -> the recipe's python. */
  python: string | undefined;
  /** `--release X` of up, doctor, bench, export k8s: the environment `dynamo-dev setup` made for X (host/python/python.ts resolvePython). */
  release?: string;
  env: NodeJS.ProcessEnv;
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable;
  /** stdout is a TTY and --json is off: ink and spinners allowed. */
  interactive: boolean;
}

/** Exit codes (CLI.md), said in errors.ts so that a service (run/setup.ts) can report them too. */
export { EXIT } from '../errors.js';
