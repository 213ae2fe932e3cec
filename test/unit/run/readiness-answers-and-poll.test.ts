import { describe, expect, it } from 'vitest';
import {
  classifyLine, compileLogPattern, completionAnswered, frontendHealthy, frontendLive, kvLineHiddenBy, modelListed, pollHttp, workerHealthy,
  workersCounted, workersSeen, type PollDeps,
} from '../../../src/run/readiness.js';
import { KV_LINE_PATTERN } from '../../../src/plan/types.js';
import type { HttpProbe } from '../../../src/host/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';

// What counts as "ready" in a log line or an HTTP answer, at the edges (an answer that is almost
// right, a worker count exactly at the plan's), and the readiness poll's pace on a fake clock.

const KV = compileLogPattern(KV_LINE_PATTERN);
const probe = (body: unknown, status = 200): HttpProbe => ({ url: 'http://x', ok: status < 400, status, body, error: null });

describe('log lines', () => {
  it('a line matching the KV pattern without a readable count is no KV line (and may still be something else)', () => {
    const odd = compileLogPattern('GPU KV cache size: (\\S*) tokens');
    expect(classifyLine('GPU KV cache size: lots tokens', odd)).toBeNull();
    expect(classifyLine('Loading weights took 2.1 s; GPU KV cache size: ? tokens', odd)).toEqual({ kind: 'loading' });
  });

  it('no KV pattern (a frontend): a KV-like line is not a KV line', () => {
    expect(classifyLine('GPU KV cache size: 14,816 tokens', null)).toBeNull();
  });

  it('the download-lock wait, with and without the elapsed time, in either case, ending in spaces', () => {
    expect(classifyLine('INFO filelock: Still waiting to acquire lock on /hf/.locks/a.lock (elapsed: 10.5 seconds)  ', KV))
      .toEqual({ kind: 'lock-wait', lockPath: '/hf/.locks/a.lock', elapsedS: 10.5 });
    expect(classifyLine('still waiting to acquire lock on /hf/.locks/b.lock', KV)).toEqual({ kind: 'lock-wait', lockPath: '/hf/.locks/b.lock', elapsedS: null });
    // Something after the lock path that is not the elapsed time: not the filelock line.
    expect(classifyLine('Still waiting to acquire lock on /hf/.locks/b.lock because of x', KV)).toBeNull();
  });

  it('the logging level that hides the KV line is found with spaces and in any case', () => {
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: '  critical ' })).toBe('critical');
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: 'Fatal' })).toBe('Fatal');
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: 'WARN' })).toBe('WARN');
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: '' })).toBeNull();
    expect(kvLineHiddenBy({ VLLM_LOGGING_LEVEL: '   ' })).toBeNull();
  });
});

describe('HTTP answers', () => {
  it('a worker is healthy only on status "ready" (not "notready", not a bare 200)', () => {
    expect(workerHealthy(probe({ status: 'ready' }))).toBe(true);
    expect(workerHealthy(probe({ status: 'notready' }, 503))).toBe(false);
    expect(workerHealthy(probe({}))).toBe(false);
    expect(workerHealthy(probe(null))).toBe(false);
    expect(workerHealthy(probe('ready'))).toBe(false);
    expect(workerHealthy(probe({ status: 1 }))).toBe(false);
  });

  it('the frontend is live on a 2xx that says "live" or says nothing; never on an error status', () => {
    expect(frontendLive(probe({ status: 'live' }))).toBe(true);
    expect(frontendLive(probe({ other: 1 }))).toBe(true);
    expect(frontendLive(probe(null))).toBe(true);
    expect(frontendLive(probe({ status: 'live' }, 503))).toBe(false);
    expect(frontendLive(probe({ status: 'starting' }))).toBe(false);
  });

  it('the frontend is healthy only when it says "healthy" (its 200 may say "unhealthy")', () => {
    expect(frontendHealthy(probe({ status: 'healthy' }))).toBe(true);
    expect(frontendHealthy(probe({ status: 'unhealthy' }))).toBe(false);
  });

  it('the model is listed only in a successful answer', () => {
    expect(modelListed(probe({ data: [{ id: 'm' }] }), 'm')).toBe(true);
    expect(modelListed(probe({ data: [{ id: 'm' }] }, 500), 'm')).toBe(false);
    expect(modelListed(probe({ data: [{ id: 'other' }] }), 'm')).toBe(false);
  });

  it('workers counted: /ready\'s counts (0 while not ready), else /health\'s generate instances, else unknown', () => {
    const ready = (r: boolean, n: number) => ({ model: 'm', ready: r, namespaces: { dynamo: { worker_types: { aggregated: { workers: n } } } } });
    expect(workersSeen(null)).toBeNull();
    expect(workersSeen(probe(null))).toBeNull();
    expect(workersSeen(probe(ready(true, 2)))).toBe(2);
    expect(workersSeen(probe(ready(false, 2)))).toBe(0);
    expect(workersSeen(probe({ status: 'healthy', instances: [{ endpoint: 'generate', instance_id: 1 }, { endpoint: 'clear_kv_blocks', instance_id: 1 }] }))).toBe(1);
    expect(workersSeen(probe({ status: 'healthy', instances: 'none' }))).toBeNull();
    expect(workersSeen(probe({ status: 'healthy' }))).toBeNull();
  });

  it('exactly the planned number of workers is enough; one fewer is not; an error answer never is', () => {
    const ready = (n: number, status = 200) => probe({ model: 'm', ready: true, namespaces: { dynamo: { worker_types: { aggregated: { workers: n } } } } }, status);
    expect(workersCounted(ready(2), 2)).toBe(true);
    expect(workersCounted(ready(3), 2)).toBe(true);
    expect(workersCounted(ready(1), 2)).toBe(false);
    expect(workersCounted(ready(2, 503), 2)).toBe(false);
    expect(workersCounted(probe({ other: true }), 0)).toBe(false); // unknown is not zero
  });

  it('a completion counts only with at least one choice in a successful answer', () => {
    expect(completionAnswered(probe({ choices: [{ index: 0 }] }))).toBe(true);
    expect(completionAnswered(probe({ choices: [] }))).toBe(false);
    expect(completionAnswered(probe({ choices: [{ index: 0 }] }, 503))).toBe(false);
    expect(completionAnswered(probe(null))).toBe(false);
    expect(completionAnswered(probe('choices'))).toBe(false);
    expect(completionAnswered(probe({ choices: 'x' }))).toBe(false);
  });
});

describe('the readiness poll', () => {
  function deps(answers: HttpProbe[], latencyMs: number, clock: FakeClock) {
    const asked: { t: number; url: string; body?: unknown; timeoutMs: number }[] = [];
    const keep: boolean[] = [];
    const answer = async (url: string, timeoutMs: number, body?: unknown) => {
      asked.push({ t: clock.now(), url, ...(body === undefined ? {} : { body }), timeoutMs });
      await clock.sleep(latencyMs);
      return answers.shift() ?? probe({ status: 'notready' }, 503);
    };
    const d: PollDeps = {
      get: (url, timeoutMs) => answer(url, timeoutMs),
      post: (url, body, timeoutMs) => answer(url, timeoutMs, body),
      clock: {
        now: () => clock.now(),
        setTimeout: (fn, ms, keepAlive) => (keep.push(keepAlive === true), clock.setTimeout(fn, ms)),
        clear: (t) => clock.clear(t),
      },
    };
    return { d, asked, keep };
  }

  it('asks once per interval counted from the start of each request, at once when a request took longer, and keeps the process alive meanwhile', async () => {
    const clock = new FakeClock();
    const { d, asked, keep } = deps([probe({ status: 'notready' }, 503), probe({ status: 'notready' }, 503), probe({ status: 'ready' })], 30, clock);
    const seen: (number | null)[] = [];
    const ctl = new AbortController();
    const done = pollHttp('http://w/health', workerHealthy, { intervalMs: 100, requestTimeoutMs: 700, signal: ctl.signal, onAnswer: (p) => seen.push(p.status) }, d);
    await clock.advance(1000);
    expect((await done).status).toBe(200);
    expect(asked.map((a) => a.t)).toEqual([0, 100, 200]);
    expect(asked.every((a) => a.timeoutMs === 700 && a.url === 'http://w/health')).toBe(true);
    expect(seen).toEqual([503, 503, 200]);
    expect(keep).toEqual([true, true]);

    const slow = new FakeClock();
    const s = deps([probe(null, 503), probe({ status: 'ready' })], 150, slow);
    const done2 = pollHttp('http://w/health', workerHealthy, { intervalMs: 100, requestTimeoutMs: 700, signal: new AbortController().signal }, s.d);
    await slow.advance(1000);
    await done2;
    expect(s.asked.map((a) => a.t)).toEqual([0, 150]);
  });

  it('POSTs the body when one is given (the completion check)', async () => {
    const clock = new FakeClock();
    const { d, asked } = deps([probe({ choices: [{ index: 0 }] })], 5, clock);
    const body = { model: 'm', max_tokens: 1 };
    const done = pollHttp('http://f/v1/chat/completions', completionAnswered, { intervalMs: 100, requestTimeoutMs: 700, signal: new AbortController().signal, body }, d);
    await clock.advance(10);
    await done;
    expect(asked).toEqual([{ t: 0, url: 'http://f/v1/chat/completions', body, timeoutMs: 700 }]);
  });

  it('a stop while waiting ends the poll at once with the stop\'s reason, and leaves no timer behind', async () => {
    const clock = new FakeClock();
    const { d, asked } = deps([], 10, clock);
    const ctl = new AbortController();
    const done = pollHttp('http://w/health', workerHealthy, { intervalMs: 100, requestTimeoutMs: 700, signal: ctl.signal }, d);
    const outcome = done.then(() => 'resolved', (e: Error) => e.message);
    await clock.advance(50);
    ctl.abort(new Error('stopping'));
    expect(await outcome).toBe('stopping');
    expect(clock.pending).toBe(0);
    await clock.advance(500);
    expect(asked).toHaveLength(1);
  });

  it('a poll started after the stop never asks at all', async () => {
    const clock = new FakeClock();
    const { d, asked } = deps([], 10, clock);
    const ctl = new AbortController();
    ctl.abort(new Error('detached'));
    await expect(pollHttp('http://w/health', workerHealthy, { intervalMs: 100, requestTimeoutMs: 700, signal: ctl.signal }, d)).rejects.toThrow('detached');
    expect(asked).toEqual([]);
  });

  it('a stop during a request ends the poll after that answer, without another request', async () => {
    const clock = new FakeClock();
    const { d, asked } = deps([], 40, clock);
    const ctl = new AbortController();
    const outcome = pollHttp('http://w/health', workerHealthy, { intervalMs: 100, requestTimeoutMs: 700, signal: ctl.signal }, d).then(() => 'resolved', (e: Error) => e.message);
    await clock.advance(20);
    ctl.abort(new Error('failed'));
    await clock.advance(500);
    expect(await outcome).toBe('failed');
    expect(asked).toHaveLength(1);
  });
});
