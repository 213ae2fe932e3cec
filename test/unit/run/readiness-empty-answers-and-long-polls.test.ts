import { describe, expect, it } from 'vitest';
import { getEventListeners } from 'node:events';
import { completionAnswered, pollHttp, workerHealthy } from '../../../src/run/readiness.js';
import type { HttpProbe } from '../../../src/host/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';

// Answers without a JSON body (a proxy's empty 200, a 204) are "not ready", never a crash of the
// supervisor; and a poll that goes on for minutes (a slow model load polled every 50 ms) does not
// pile up abort listeners, which Node reports on the user's terminal as a memory leak warning.

const empty = (status: number): HttpProbe => ({ url: 'http://w/health', ok: status < 400, status, body: null, error: null });

describe('an answer without a body', () => {
  it('a worker /health with no body is not ready', () => {
    expect(workerHealthy(empty(200))).toBe(false);
    expect(workerHealthy(empty(503))).toBe(false);
  });

  it('a chat completion answered 200 with no body is not answered', () => {
    expect(completionAnswered(empty(200))).toBe(false);
  });
});

describe('a long poll', () => {
  it('200 rounds leave at most the one abort listener of the round in progress', async () => {
    const clock = new FakeClock();
    const ctl = new AbortController();
    let asked = 0;
    const get = async (url: string): Promise<HttpProbe> => (asked++, { url, ok: false, status: 503, body: { status: 'notready' }, error: null });
    const done = pollHttp('http://w/health', workerHealthy, { intervalMs: 50, requestTimeoutMs: 1000, signal: ctl.signal }, { get, clock });
    done.catch(() => {});
    await clock.advance(200 * 50);
    expect(asked).toBeGreaterThanOrEqual(200);
    expect(getEventListeners(ctl.signal, 'abort').length).toBeLessThanOrEqual(1);
    ctl.abort(new Error('stopping'));
    await expect(done).rejects.toThrow('stopping');
    expect(clock.pending).toBe(0);
  });
});
