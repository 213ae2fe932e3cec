import { UserError } from '../../errors.js';
import type { ProcessRole } from '../../plan/types.js';
import { endedWords } from '../ended.js';
import type { RestartPolicy } from '../types.js';

// `up --restart on-failure[:N]`: which deaths of a ready run's workers its supervisor restarts, as
// pure functions. The words and their meaning are docker's (Engine API RestartPolicy, v1.57:
// "on-failure: Restart only when the container exit code is non-zero"; MaximumRetryCount "the
// number of times to retry before giving up"; without it docker retries forever, as
// process-compose's max_restarts 0 does): on-failure restarts a worker that ended with a non-zero
// code or was killed by a signal; N is how many times per worker at most; no N, no limit. Unlike
// docker, a restart must come back ready (its KV line, the frontend counting it): one that does
// not is not tried again, so a bad config never loops. Before the run was first ready a death is
// up's failure, as without the flag.

export type { RestartPolicy };

/** The most N may be: a worker restarted more often than this has a problem a restart will not fix. */
export const MAX_RESTARTS = 1000;

const VALID = `valid: on-failure (restart a worker that dies after the run was ready, no limit) or on-failure:N (at most N times per worker, N a whole number 1-${MAX_RESTARTS})`;

/** `--restart VALUE` -> the policy; anything else is the user's input error (exit 2, one line). */
export function parseRestartPolicy(value: string): RestartPolicy {
  const m = /^on-failure(?::(.*))?$/.exec(value.trim());
  if (!m) {
    const hint = value === 'always' || value === 'unless-stopped' ? ' (only failures are restarted: a worker that exits 0 meant to)' : '';
    throw new UserError(`--restart: ${JSON.stringify(value)} is not a restart policy${hint}; ${VALID}`);
  }
  if (m[1] === undefined) return { mode: 'on-failure', max: null };
  const n = /^\d+$/.test(m[1]) ? Number(m[1]) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_RESTARTS) {
    throw new UserError(`--restart: ${JSON.stringify(value)}: N must be a whole number 1-${MAX_RESTARTS} (omit it for no limit); ${VALID}`);
  }
  return { mode: 'on-failure', max: n };
}

/** The flag as the user wrote it (for messages and status). */
export function policyText(p: RestartPolicy): string {
  return p.max === null ? 'on-failure' : `on-failure:${p.max}`;
}

export interface DeathView {
  role: ProcessRole;
  /** The run had been ready (every process) before this death. */
  afterReady: boolean;
  code: number | null;
  signal: string | null;
  /** Could not be started at all (spawn error). */
  error?: string | null;
  /** Restarts of this process the policy made so far. */
  restartsByPolicy: number;
}

export type RestartDecision = { restart: true } | { restart: false; why: string | null };

/** How a process ended, in the words status and the log marker use. */
export function endedHow(d: Pick<DeathView, 'code' | 'signal' | 'error'>): string {
  return endedWords(d, 'parens');
}

/**
 * Whether this death is restarted. `why`: said where it is not although the policy is on (null:
 * not the policy's business: the frontend, a start that never was ready).
 */
export function decideRestart(p: RestartPolicy | null, d: DeathView): RestartDecision {
  if (!p || !d.afterReady || d.role === 'frontend') return { restart: false, why: null };
  if (!d.signal && d.code === 0 && !d.error) return { restart: false, why: `it exited with code 0, not a failure (--restart ${policyText(p)} restarts failures only)` };
  if (p.max !== null && d.restartsByPolicy >= p.max) {
    return { restart: false, why: `restart limit reached: restarted ${d.restartsByPolicy} time${d.restartsByPolicy === 1 ? '' : 's'} already (--restart ${policyText(p)})` };
  }
  return { restart: true };
}

/**
 * The back-off between restarts of a crash loop, as docker's (moby daemon/restartmanager
 * restartmanager.go: backoffMultiplier 2, defaultTimeout 100 ms, maxRestartTimeout 1 min; a
 * container that ran >= 10 s resets it): the first restart waits 100 ms, each restart of a process
 * that ended again within RESTART_RESET_MS of its start waits twice the one before, at most
 * RESTART_MAX_DELAY_MS.
 */
export const RESTART_FIRST_DELAY_MS = 100;
export const RESTART_MAX_DELAY_MS = 60_000;
export const RESTART_RESET_MS = 10_000;

/** Pure: the wait before this restart, given the one before (null: none yet) and how long the process was up. */
export function nextRestartDelay(previousMs: number | null, upMs: number): number {
  if (previousMs === null || upMs >= RESTART_RESET_MS) return RESTART_FIRST_DELAY_MS;
  return Math.min(previousMs * 2, RESTART_MAX_DELAY_MS);
}

/** How the back-off reads in a hint and in status. */
export const BACKOFF_RULE = 'back-off doubles from 100 ms up to 1 min, reset once it stays up 10 s';

/** "ended 1.2 s after its start: started again after 3.2 s (back-off ...)": a crash loop's wait, said by up and status. */
export function backoffWords(b: { delayMs: number; upMs: number }): string {
  return `ended ${formatSeconds(b.upMs)} after its start: started again after ${formatSeconds(b.delayMs)} (${BACKOFF_RULE})`;
}

const formatSeconds = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`);
