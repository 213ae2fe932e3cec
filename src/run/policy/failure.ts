import type { ProcessRole } from '../../plan/types.js';
import type { ExitInfo } from '../spawn.js';
import type { ProcessState } from '../types.js';
import { endedWords, whenEnded } from '../ended.js';

// What a failure means for the user, as pure functions: which process is to blame, the one-line
// reason, and a hint when we know better than the log. The coordinator adds the log's diagnosis
// (I/O) and stops the run.

export interface FailureView {
  name: string;
  role: ProcessRole;
  state: ProcessState;
  waitFor: readonly string[];
  /** The health URL a kv-allocated worker is being polled on. */
  readyHttp?: string;
  lockWait: { lockPath: string } | null;
  /** Its KV line was seen or it is healthy: it has loaded the model. */
  loaded: boolean;
  /** The HTTP step it (for a viaFrontend worker: the frontend) is polling, with the last answer. */
  waitingFor?: string | null;
  /** Ready only through the frontend (the mocker). */
  viaFrontend?: boolean;
}

export interface FailureReport {
  reason: string;
  /** The process to blame (its log is diagnosed and its tail shown); null when none is. */
  process: string | null;
  hint?: string;
}

/** A planned process ended on its own (or could not be started). */
export function exitFailure(p: { name: string; argv0: string }, info: ExitInfo, afterReady: boolean): FailureReport {
  if (info.error) {
    return {
      reason: `${p.name} could not be started: ${info.error}`,
      process: p.name,
      hint: `check the interpreter: --python PATH, $DYNAMO_DEV_PYTHON or the recipe's python (now ${p.argv0})`,
    };
  }
  return { reason: `${p.name} ${endedWords(info)} ${whenEnded(afterReady)}`, process: p.name };
}

/** The ready deadline passed. A worker behind is the cause; the frontend waiting for the model is only its symptom. */
export function deadlineFailure(procs: readonly FailureView[], readyTimeoutMs: number): FailureReport {
  const stuck = procs.find((p) => p.role !== 'frontend' && p.state !== 'ready') ?? procs.find((p) => p.state !== 'ready') ?? null;
  const what = stuck ? `${stuck.name} is still ${describeWait(stuck)}` : 'not every process is ready';
  return { reason: `not ready after ${Number((readyTimeoutMs / 1000).toFixed(1))} s: ${what}`, process: stuck?.name ?? null };
}

/**
 * A worker logs that it waits for the Hugging Face download lock. Once another worker of this
 * model has loaded it, the download is done: nothing legitimate still holds the lock, so this
 * worker would wait forever (FACTS §6, the "second worker never started" case). null: keep waiting.
 */
export function lockWaitFailure(p: FailureView, lockPath: string, procs: readonly FailureView[], model: string): FailureReport | null {
  const loaded = procs.find((q) => q.name !== p.name && q.role !== 'frontend' && q.loaded);
  if (!loaded) return null;
  return {
    reason: `${p.name} is blocked on the Hugging Face download lock ${lockPath}`,
    process: p.name,
    hint: `${loaded.name} already loaded ${model}, so the download is finished and the lock is held by another process or stale; ` +
      `see who holds it with \`dynamo-dev doctor --only hf.locks\` (or \`fuser ${lockPath}\`), stop that process, ` +
      `or delete the lock file if no process holds it; then run up again`,
  };
}

/** The frontend logged a model file it cannot parse: the start fails at once, naming it (its path in Dynamo's model cache, whose source is the model's own file). */
export function modelErrorFailure(process: string, error: string): FailureReport {
  return {
    reason: `${process} cannot load the model: ${error}`,
    process,
    hint: 'a file of the model is truncated or not what it should be (an interrupted download, a file cut short): download the model again (`hf download MODEL`), or fix the file in the model folder; then run up again',
  };
}

/** What a process not yet ready is waiting for, in words. */
export function describeWait(p: FailureView): string {
  if (p.viaFrontend && (p.state === 'starting' || p.state === 'loading')) {
    return `not counted by the frontend, which is ${p.waitingFor ?? 'not answering yet'}`;
  }
  if (p.role === 'frontend' && p.state === 'loading' && p.waitingFor) return p.waitingFor;
  switch (p.state) {
    case 'waiting':
      return `waiting for ${p.waitFor.join(', ')}`;
    case 'starting':
      return 'starting (nothing useful logged yet)';
    case 'loading':
      if (p.lockWait) return `waiting for the Hugging Face lock ${p.lockWait.lockPath}`;
      return p.role === 'frontend' ? 'waiting for the model in /v1/models' : 'loading (no KV cache size logged yet)';
    case 'kv-allocated':
      return p.waitingFor ? `not ${p.waitingFor}` : `not answering ready on ${p.readyHttp}`;
    default:
      return p.state;
  }
}
