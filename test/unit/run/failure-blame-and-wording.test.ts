import { describe, expect, it } from 'vitest';
import { deadlineFailure, describeWait, lockWaitFailure, type FailureView } from '../../../src/run/policy/failure.js';

// What `up` says when the ready deadline passes or a worker stalls on the download lock: which
// process is blamed (its log is diagnosed and shown) and the words of what it was waiting for.

const view = (o: Partial<FailureView>): FailureView => ({
  name: 'agg-0', role: 'agg', state: 'ready', waitFor: [], lockWait: null, loaded: false, readyHttp: 'http://127.0.0.1:8081/health', ...o,
});
const frontend = (o: Partial<FailureView> = {}) => view({ name: 'frontend', role: 'frontend', readyHttp: undefined, ...o });

describe('the deadline blames the process that held the run up', () => {
  it('a worker already ready is never blamed: the first worker still behind is', () => {
    const f = deadlineFailure([frontend({ state: 'loading' }), view({ name: 'agg-0' }), view({ name: 'agg-1', state: 'loading' })], 60_000);
    expect(f).toEqual({ reason: 'not ready after 60 s: agg-1 is still loading (no KV cache size logged yet)', process: 'agg-1' });
  });

  it('every worker ready: the frontend still behind is blamed, wherever it is in the plan', () => {
    const f = deadlineFailure([view({ name: 'agg-0' }), frontend({ state: 'loading' })], 2_500);
    expect(f).toEqual({ reason: 'not ready after 2.5 s: frontend is still waiting for the model in /v1/models', process: 'frontend' });
  });

  it('nothing behind (all ready when the deadline fired): nobody is blamed, and the reason still says what', () => {
    const f = deadlineFailure([view({ name: 'agg-0' }), frontend()], 10_000);
    expect(f).toEqual({ reason: 'not ready after 10 s: not every process is ready', process: null });
  });
});

describe('a worker waiting for the download lock', () => {
  const lock = '/hf/.locks/models--m/abc.lock';

  it('only another worker having loaded the model makes the wait hopeless; its own load does not count', () => {
    const me = view({ name: 'agg-1', state: 'loading', loaded: true, lockWait: { lockPath: lock } });
    expect(lockWaitFailure(me, lock, [frontend({ loaded: true }), view({ name: 'agg-0', state: 'loading' }), me], 'm')).toBeNull();
  });

  it('the hint says who loaded it and every way out, word for word', () => {
    const me = view({ name: 'agg-1', state: 'loading', lockWait: { lockPath: lock } });
    expect(lockWaitFailure(me, lock, [frontend(), view({ name: 'agg-0', loaded: true }), me], 'Qwen/Qwen3-0.6B')).toEqual({
      reason: `agg-1 is blocked on the Hugging Face download lock ${lock}`,
      process: 'agg-1',
      hint: 'agg-0 already loaded Qwen/Qwen3-0.6B, so the download is finished and the lock is held by another process or stale; ' +
        `see who holds it with \`dynamo-dev doctor --only hf.locks\` (or \`fuser ${lock}\`), stop that process, ` +
        'or delete the lock file if no process holds it; then run up again',
    });
  });
});

describe('what a process not yet ready is waiting for', () => {
  it('a worker ready through the frontend (the mocker), starting or loading: what the frontend is doing', () => {
    const mocker = (state: FailureView['state'], waitingFor: string | null) => describeWait(view({ state, viaFrontend: true, waitingFor }));
    expect(mocker('starting', null)).toBe('not counted by the frontend, which is not answering yet');
    expect(mocker('loading', 'counting workers: it sees 1 of 2')).toBe('not counted by the frontend, which is counting workers: it sees 1 of 2');
  });

  it('a mocker still waiting for its predecessors says so, not what the frontend does', () => {
    expect(describeWait(view({ state: 'waiting', waitFor: ['agg-0'], viaFrontend: true, waitingFor: 'answering /live (no answer yet)' })))
      .toBe('waiting for agg-0');
  });

  it('the frontend loading says the step it polls; starting, it has logged nothing useful yet', () => {
    expect(describeWait(frontend({ state: 'loading', waitingFor: 'waiting for m in /v1/models (HTTP 200 {"data":[]})' })))
      .toBe('waiting for m in /v1/models (HTTP 200 {"data":[]})');
    expect(describeWait(frontend({ state: 'starting', waitingFor: 'answering /live (no answer yet)' }))).toBe('starting (nothing useful logged yet)');
  });

  it('a loading worker is loading, whatever step was polled before', () => {
    expect(describeWait(view({ state: 'loading', waitingFor: 'answering ready on http://w/health (HTTP 503)' })))
      .toBe('loading (no KV cache size logged yet)');
  });

  it('a process waiting for several names each of them', () => {
    expect(describeWait(view({ name: 'agg-2', state: 'waiting', waitFor: ['agg-0', 'agg-1'] }))).toBe('waiting for agg-0, agg-1');
  });
});
