import { describe, expect, it } from 'vitest';
import { startable } from '../../../src/run/policy/start-order.js';
import { deadlineFailure, describeWait, exitFailure, lockWaitFailure, type FailureView } from '../../../src/run/policy/failure.js';
import { ProcessReadiness, readinessPlan, type ReadinessHost } from '../../../src/run/policy/readiness.js';
import type { HttpProbe } from '../../../src/host/types.js';
import type { PlannedProcess } from '../../../src/plan/types.js';
import type { ProcessState } from '../../../src/run/types.js';
import { KV_LINE_PATTERN } from '../../../src/plan/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const KV_LINE = 'INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens';

describe('start order', () => {
  const v = (name: string, state: ProcessState, waitFor: string[] = [], gateOpen = false) => ({ name, state, waitFor, gateOpen });
  it('starts what waits on nothing; a worker only once its predecessor opened the gate', () => {
    expect(startable([v('frontend', 'waiting'), v('agg-0', 'waiting'), v('agg-1', 'waiting', ['agg-0'])])).toEqual(['frontend', 'agg-0']);
    expect(startable([v('agg-0', 'kv-allocated', [], false), v('agg-1', 'waiting', ['agg-0'])])).toEqual([]);
    expect(startable([v('agg-0', 'kv-allocated', [], true), v('agg-1', 'waiting', ['agg-0'])])).toEqual(['agg-1']);
  });
  it('never starts twice, and every predecessor must be open', () => {
    expect(startable([v('a', 'starting'), v('b', 'ready', [], true), v('c', 'waiting', ['a', 'b'])])).toEqual([]);
    expect(startable([v('a', 'ready', [], true), v('b', 'ready', [], true), v('c', 'waiting', ['a', 'b'])])).toEqual(['c']);
  });
});

describe('failure reports', () => {
  const view = (o: Partial<FailureView>): FailureView => ({
    name: 'agg-0', role: 'agg', state: 'ready', waitFor: [], lockWait: null, loaded: false, readyHttp: 'http://127.0.0.1:8081/health', ...o,
  });
  it('an exit names the process, how it ended and whether the run was ready', () => {
    expect(exitFailure({ name: 'agg-1', argv0: 'python3' }, { code: 1, signal: null, error: null }, true))
      .toEqual({ reason: 'agg-1 exited with code 1 after the run was ready', process: 'agg-1' });
    expect(exitFailure({ name: 'agg-1', argv0: 'python3' }, { code: null, signal: 'SIGKILL', error: null }, false).reason)
      .toBe('agg-1 was killed by SIGKILL before it was ready');
  });
  it('a process that could not be started points at the interpreter', () => {
    expect(exitFailure({ name: 'frontend', argv0: '/no/python' }, { code: null, signal: null, error: 'cannot start /no/python: no such program' }, false))
      .toEqual({
        reason: 'frontend could not be started: cannot start /no/python: no such program', process: 'frontend',
        hint: "check the interpreter: --python PATH, $DYNAMO_DEV_PYTHON or the recipe's python (now /no/python)",
      });
  });
  it('at the deadline a worker behind is blamed before the frontend waiting for it', () => {
    const procs = [view({ name: 'frontend', role: 'frontend', state: 'loading' }), view({ name: 'agg-0', state: 'kv-allocated' })];
    expect(deadlineFailure(procs, 1500)).toEqual({ reason: 'not ready after 1.5 s: agg-0 is still not answering ready on http://127.0.0.1:8081/health', process: 'agg-0' });
    expect(deadlineFailure([view({ name: 'frontend', role: 'frontend', state: 'loading' })], 900_000).reason)
      .toBe('not ready after 900 s: frontend is still waiting for the model in /v1/models');
  });
  it('describes each kind of wait', () => {
    expect(describeWait(view({ state: 'waiting', waitFor: ['agg-0'] }))).toBe('waiting for agg-0');
    expect(describeWait(view({ state: 'starting' }))).toBe('starting (nothing useful logged yet)');
    expect(describeWait(view({ state: 'loading' }))).toBe('loading (no KV cache size logged yet)');
    expect(describeWait(view({ state: 'loading', lockWait: { lockPath: '/hf/.locks/x.lock' } }))).toBe('waiting for the Hugging Face lock /hf/.locks/x.lock');
  });
  it('a lock wait fails only once another worker has loaded the model', () => {
    const me = view({ name: 'agg-1', state: 'loading' });
    const frontend = view({ name: 'frontend', role: 'frontend', loaded: true });
    expect(lockWaitFailure(me, '/hf/.locks/x.lock', [frontend, view({ name: 'agg-0', state: 'loading' }), me], 'Qwen/Qwen3-0.6B')).toBeNull();
    const f = lockWaitFailure(me, '/hf/.locks/x.lock', [frontend, view({ name: 'agg-0', loaded: true }), me], 'Qwen/Qwen3-0.6B');
    expect(f).toMatchObject({ reason: 'agg-1 is blocked on the Hugging Face download lock /hf/.locks/x.lock', process: 'agg-1' });
    expect(f!.hint).toMatch(/^agg-0 already loaded Qwen\/Qwen3-0\.6B, .*fuser \/hf\/\.locks\/x\.lock/);
  });
});

describe('readiness of one process (fake HTTP and clock)', () => {
  const worker: PlannedProcess = {
    name: 'agg-0', role: 'agg', argv: ['python3'], env: {}, ports: { system: 8081 }, gpuMemoryUtilization: 0.4, waitFor: [],
    ready: { logPattern: KV_LINE_PATTERN, http: 'http://w/health' }, publishesKvEvents: false, kvTokensEstimate: null,
  };
  const frontend: PlannedProcess = { ...worker, name: 'frontend', role: 'frontend', ready: { http: 'http://f/v1/models' } };
  const run = { frontendUrl: 'http://f', model: 'm' };
  const probe = (url: string, status: number, body: unknown): HttpProbe => ({ url, ok: status < 400, status, body, error: null });

  function harness(spec: PlannedProcess, answer: (url: string, n: number) => HttpProbe) {
    const clock = new FakeClock();
    const calls: { t: number; url: string }[] = [];
    const log: string[] = [];
    let state: ProcessState = 'starting';
    const host: ReadinessHost = {
      state: () => state,
      setState: (s) => { state = s; log.push(`state ${s}`); },
      kvLine: (t) => log.push(`kv ${t}`),
      changed: () => log.push('changed'),
      gateOpened: () => log.push('gate'),
      lockWait: (w) => log.push(`lock ${w.lockPath}`),
      ready: () => log.push('ready'),
      running: () => true,
      exited: () => false,
    };
    const abort = new AbortController();
    const get = async (url: string) => {
      calls.push({ t: clock.now(), url });
      return answer(url, calls.filter((c) => c.url === url).length);
    };
    const r = new ProcessReadiness(readinessPlan(spec, run, 50), host, { get, clock }, abort.signal);
    return { r, clock, calls, log, abort };
  }

  it('a worker: no HTTP before its KV line; then /health every 50 ms until "ready"', async () => {
    const h = harness(worker, (url, n) => probe(url, n < 3 ? 503 : 200, { status: n < 3 ? 'notready' : 'ready' }));
    h.r.started();
    h.r.onLine('INFO Loading weights took 1.2 s');
    await h.clock.advance(500);
    expect(h.calls).toEqual([]);
    expect(h.r.gateOpen).toBe(false);
    h.r.onLine(KV_LINE);
    expect(h.r.gateOpen).toBe(true); // the next worker may start: this one's memory is taken
    await h.clock.advance(100);
    expect(h.calls.map((c) => c.t)).toEqual([500, 550, 600]);
    expect(h.log).toEqual(['state loading', 'kv 14816', 'state kv-allocated', 'gate', 'state ready', 'ready']);
  });

  it('the frontend: /live, then the model in /v1/models (polled no faster than 100 ms)', async () => {
    const h = harness(frontend, (url, n) => url.endsWith('/live')
      ? probe(url, 200, { status: 'live' })
      : probe(url, 200, { object: 'list', data: n < 3 ? [] : [{ id: 'm' }] }));
    h.r.started();
    await h.clock.advance(1000);
    expect(h.calls.map((c) => `${c.t} ${c.url}`)).toEqual(['0 http://f/live', '0 http://f/v1/models', '100 http://f/v1/models', '200 http://f/v1/models']);
    expect(h.log).toEqual(['state loading', 'state ready', 'ready']);
    expect(h.r.gateOpen).toBe(true);
  });

  it('aborting (stop, failure, detach) ends the polling and no state changes after it', async () => {
    const h = harness(worker, (url) => probe(url, 503, { status: 'notready' }));
    h.r.onLine(KV_LINE);
    await h.clock.advance(120);
    h.abort.abort(new Error('stopping'));
    const before = h.calls.length;
    await h.clock.advance(1000);
    expect(h.calls.length).toBe(before);
    expect(h.clock.pending).toBe(0);
    expect(h.log.at(-1)).toBe('gate');
  });

  it('a lock-wait line is reported with its path (the failure policy judges it)', () => {
    const h = harness(worker, (url) => probe(url, 503, null));
    h.r.onLine('huggingface_hub.utils._fixes - Still waiting to acquire lock on /hf/.locks/x.lock (elapsed: 10.0 seconds)');
    expect(h.log).toEqual(['state loading', 'lock /hf/.locks/x.lock']);
    expect(h.r.lockWait).toEqual({ lockPath: '/hf/.locks/x.lock', elapsedS: 10 });
  });
});
