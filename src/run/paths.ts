import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { UserError } from '../errors.js';

/** $DYNAMO_DEV_HOME, else $XDG_STATE_HOME/dynamo-dev, else ~/.local/state/dynamo-dev (CLI.md). */
export function resolveStateDir(env: NodeJS.ProcessEnv, flag?: string): string {
  if (flag) return resolve(flag);
  if (env.DYNAMO_DEV_HOME) return resolve(env.DYNAMO_DEV_HOME);
  if (env.XDG_STATE_HOME) return join(resolve(env.XDG_STATE_HOME), 'dynamo-dev');
  return join(env.HOME || homedir(), '.local', 'state', 'dynamo-dev');
}

/**
 * A state directory whose path holds a control character (a newline, an escape) is refused: every
 * path printed from it (logs, runs) would not be the real one, and its escapes would reach the
 * terminal. The command line refuses such arguments already (cli.ts), so it came from the environment.
 */
export function refuseUnprintableStateDir(stateDir: string, env: NodeJS.ProcessEnv): void {
  const bad = /[\u0000-\u001f\u007f-\u009f]/.exec(stateDir);
  if (!bad) return;
  const from = env.DYNAMO_DEV_HOME ? 'DYNAMO_DEV_HOME' : env.XDG_STATE_HOME ? 'XDG_STATE_HOME' : 'HOME';
  const what = bad[0] === '\n' ? 'a newline' : bad[0] === '\u001b' ? 'an escape character' : 'a control character';
  throw new UserError(
    `${from}: the state directory ${JSON.stringify(stateDir)} holds ${what}; the paths printed from it (runs, logs) would not be the real ones`,
    `set ${from === 'HOME' ? 'DYNAMO_DEV_HOME' : from} to a folder whose path has no control characters, or give --state-dir DIR`,
  );
}

export const runsDir = (stateDir: string) => join(stateDir, 'runs');
export const runDir = (stateDir: string, id: string) => join(stateDir, 'runs', id);
export const runJsonPath = (stateDir: string, id: string) => join(stateDir, 'runs', id, 'run.json');
export const logPath = (stateDir: string, id: string, name: string) => join(stateDir, 'runs', id, 'logs', `${name}.log`);
/** One up at a time per state directory, and per name for `up --name` (each named run its own lock). */
export const upLockPath = (stateDir: string, name?: string) => join(stateDir, name ? `up.${name}.lock` : 'up.lock');
/** The live index: an empty file per run that may still have live processes (see state.ts). */
export const liveDir = (stateDir: string) => join(stateDir, 'live');
export const liveMarkerPath = (stateDir: string, id: string) => join(stateDir, 'live', id);

/** Sortable, readable run ids, unique to the millisecond: 20261130-101500-123-agg-router. */
export function newRunId(recipe: string, now = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}-${p(now.getMilliseconds(), 3)}`;
  return `${stamp}-${recipe.replace(/[^\w.-]+/g, '-')}`;
}

/**
 * Pure: where a log path sits in a state directory, by shape alone: runs/<id> and runs/<id>/logs
 * (the whole run, file null) or runs/<id>/logs/<process>.log (that file). null for any other path.
 */
export function runPathParts(path: string): { stateDir: string; id: string; file: string | null } | null {
  const p = resolve(path);
  const [dir, file] = basename(p) === 'logs' ? [dirname(p), null] : basename(dirname(p)) === 'logs' ? [dirname(dirname(p)), p] : [p, null];
  if (basename(dirname(dir)) !== 'runs') return null;
  return { stateDir: dirname(dirname(dir)), id: basename(dir), file };
}
