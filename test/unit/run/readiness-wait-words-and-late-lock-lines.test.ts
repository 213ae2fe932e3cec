import { describe, expect, it } from 'vitest';
import { ProcessReadiness, readinessPlan, type ReadinessHost, type ReadinessPlan } from '../../../src/run/policy/readiness.js';
import type { HttpProbe } from '../../../src/host/types.js';
import type { PlannedProcess } from '../../../src/plan/types.js';
import type { ProcessState } from '../../../src/run/types.js';
import { KV_LINE_PATTERN } from '../../../src/plan/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';

// What the deadline message says a process was waiting for (the step polled and its last answer),
// and states that never go backwards: a lock-wait line after the KV line is no reason to show
// "loading" again.

const KV_LINE = 'INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens';
const LOCK_LINE = 'Still waiting to acquire lock on /hf/.locks/models--m/abc.lock (elapsed: 30.7 seconds)';
const worker: PlannedProcess = {
  name: 'agg-0', role: 'agg', argv: ['python3'], env: {}, ports: { system: 8081 }, gpuMemoryUtilization: 0.4, waitFor: [],
  ready: { logPattern: KV_LINE_PATTERN, http: 'http://w/health' }, publishesKvEvents: false, kvTokensEstimate: null,
};
const frontend: PlannedProcess = { ...worker, name: 'frontend', role: 'frontend', ready: { http: 'http://f/v1/models' } };
const run = { frontendUrl: 'http://f', model: 'm' };
const probe = (url: string, status: number, body: unknown): HttpProbe => ({ url, ok: status < 400, status, body, error: null });

function harness(plan: ReadinessPlan, answer: (url: string) => HttpProbe | Promise<HttpProbe>, start: ProcessState = 'starting') {
  const clock = new FakeClock();
  const log: string[] = [];
  let state: ProcessState = start;
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
  const r = new ProcessReadiness(plan, host, { get: async (url) => answer(url), clock }, abort.signal);
  return { r, clock, log, abort, state: () => state };
}

describe('what the frontend is waiting for, in words', () => {
  it('before any answer: "no answer yet"', async () => {
    const h = harness(readinessPlan(frontend, run, 50), () => new Promise<HttpProbe>(() => {}));
    h.r.started();
    await h.clock.advance(0);
    expect(h.r.waitingFor).toBe('answering /live (no answer yet)');
    h.abort.abort();
  });

  it('the model list step names the model and the last answer', async () => {
    const h = harness(readinessPlan(frontend, run, 50), (url) => url.endsWith('/live')
      ? probe(url, 200, { status: 'live' })
      : probe(url, 200, { object: 'list', data: [] }));
    h.r.started();
    await h.clock.advance(250);
    expect(h.r.waitingFor).toBe('waiting for m in /v1/models (HTTP 200 {"object":"list","data":[]})');
    h.abort.abort();
  });
});

describe('a lock-wait line never moves a process back', () => {
  it('after its KV line a worker stays kv-allocated; the wait is still reported', async () => {
    const h = harness(readinessPlan(worker, run, 50), (url) => probe(url, 503, { status: 'notready' }));
    h.r.started();
    h.r.onLine(KV_LINE);
    h.r.onLine(LOCK_LINE);
    expect(h.state()).toBe('kv-allocated');
    expect(h.log).toEqual(['kv 14816', 'state kv-allocated', 'gate', 'lock /hf/.locks/models--m/abc.lock']);
    h.abort.abort();
  });

  it('while starting, a lock-wait line means loading (it got as far as the download)', () => {
    const h = harness(readinessPlan(worker, run, 50), (url) => probe(url, 503, null));
    h.r.onLine(LOCK_LINE);
    expect(h.log).toEqual(['state loading', 'lock /hf/.locks/models--m/abc.lock']);
  });
});

describe('the last step always leads to ready', () => {
  it('a `then` on the last step is not a state the process passes through', async () => {
    const plan: ReadinessPlan = {
      kvPattern: null,
      steps: [
        { url: 'http://x/a', judge: () => true, intervalMs: 50, then: 'loading', waitingFor: () => 'a' },
        { url: 'http://x/b', judge: () => true, intervalMs: 50, then: 'kv-allocated', waitingFor: () => 'b' },
      ],
    };
    const h = harness(plan, (url) => probe(url, 200, {}));
    h.r.started();
    await h.clock.advance(0);
    expect(h.log).toEqual(['state loading', 'state ready', 'ready']);
  });
});
