import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localPorts, ProcessReadiness, readinessPlan, REGISTERED_WAIT_MS, type HttpStep, type ReadinessHost } from '../../../src/run/policy/readiness.js';
import type { HttpProbe } from '../../../src/host/types.js';
import type { PlannedProcess } from '../../../src/plan/types.js';
import type { ProcessState } from '../../../src/run/types.js';
import type { TimerHandle } from '../../../src/run/clock.js';
import { KV_LINE_PATTERN, REGISTERED_LINE } from '../../../src/plan/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FIXTURES } from '../../helpers/cli.js';

// What `up` waits on, at its rarer turns (src/run/policy/readiness.ts): another process's server
// answering on the frontend's port (not ready until ours holds it, asked again after a pause), the
// process exiting or the run stopping between the last answer and `ready`, the worker's wait for
// its registration line (exactly 30 s, never after a stop), and which ports count as this machine's.

const KV_LINE = 'INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens';
const REGISTERED = "2026-12-07T07:51:55.717613Z  INFO dynamo_runtime::pipeline::network::ingress::shared_tcp_endpoint: Registered endpoint 'dynamo.backend.generate' with shared TCP server on 127.0.0.1:45797";
// A port number in a URL the fake HTTP answers: nothing binds it.
const PORT = 18_123;
const FRONTEND_URL = `http://127.0.0.1:${PORT}`;
const worker: PlannedProcess = {
  name: 'agg-0', role: 'agg', argv: ['python3'], env: {}, ports: { system: 8081 }, gpuMemoryUtilization: 0.4, waitFor: [],
  ready: { logPattern: KV_LINE_PATTERN, http: 'http://w/health', registeredLine: REGISTERED_LINE }, publishesKvEvents: false, kvTokensEstimate: null,
};
const frontend: PlannedProcess = { ...worker, name: 'frontend', role: 'frontend', ready: {} };
const probe = (status: number, body: unknown): HttpProbe => ({ url: 'u', ok: status > 0 && status < 400, status, body, error: null });
const frontendAnswers = (url: string): HttpProbe => (url.endsWith('/live') ? probe(200, { status: 'live' }) : probe(200, { object: 'list', data: [{ id: 'm', object: 'model' }] }));

/** FakeClock that records whether each timer keeps the process alive. */
class KeepAliveClock extends FakeClock {
  keepAlive: boolean[] = [];
  override setTimeout(fn: () => void, ms: number, keepAlive?: boolean): TimerHandle {
    this.keepAlive.push(keepAlive === true);
    return super.setTimeout(fn, ms);
  }
}

interface Opts {
  pollMs?: number;
  ownsPort?: (port: number, w: World) => Promise<boolean>;
  answer?: (url: string, w: World) => HttpProbe;
  state?: ProcessState;
  modelError?: boolean;
}
interface World {
  r: ProcessReadiness; clock: KeepAliveClock; calls: { t: number; url: string }[]; log: string[]; owned: number[]; abort: AbortController;
  setState(s: ProcessState): void; stop(): void; exit(): void;
}

function harness(spec: PlannedProcess, o: Opts = {}): World {
  const clock = new KeepAliveClock();
  const calls: { t: number; url: string }[] = [];
  const log: string[] = [];
  const owned: number[] = [];
  let state: ProcessState = o.state ?? 'starting';
  let running = true;
  let exited = false;
  const abort = new AbortController();
  const w = {} as World;
  const host: ReadinessHost = {
    state: () => state,
    setState: (s) => void log.push(`state ${(state = s)}`),
    kvLine: (t) => log.push(`kv ${t}`),
    changed: () => log.push('changed'),
    gateOpened: () => log.push('gate'),
    lockWait: (l) => log.push(`lock ${l.lockPath}`),
    ...(o.modelError ? { modelError: (e: string) => void log.push(`model-error ${e}`) } : {}),
    ...(o.ownsPort ? { ownsPort: (port: number) => (owned.push(port), o.ownsPort!(port, w)) } : {}),
    ready: () => log.push('ready'),
    running: () => running,
    exited: () => exited,
  };
  const ask = async (url: string) => {
    calls.push({ t: clock.now(), url });
    return (o.answer ?? frontendAnswers)(url, w);
  };
  const r = new ProcessReadiness(readinessPlan(spec, { frontendUrl: FRONTEND_URL, model: 'm' }, o.pollMs ?? 50), host, { get: (url) => ask(url), post: (url) => ask(url), clock }, abort.signal);
  Object.assign(w, {
    r, clock, calls, log, owned, abort,
    setState: (s: ProcessState) => void (state = s),
    stop: () => void (running = false),
    exit: () => void (exited = true),
  });
  return w;
}

describe("another process's server answers on the frontend's port", () => {
  it('not ready while the port is not ours; the wait says so; asked again from /live after the first step\'s interval (200 ms), then ready', async () => {
    let ours = false;
    const w = harness(frontend, { pollMs: 200, ownsPort: async () => ours });
    w.r.started();
    await w.clock.advance(0);
    expect(w.calls.map((c) => c.url)).toEqual([`${FRONTEND_URL}/live`, `${FRONTEND_URL}/v1/models`]);
    expect(w.owned).toEqual([PORT]);
    expect(w.log).toEqual(['state loading']);
    expect(w.r.waitingFor).toBe(`its port ${PORT} to be its own: another process listens there and answered`);
    expect(w.r.healthy).toBe(false);
    ours = true;
    await w.clock.advance(199);
    expect(w.calls).toHaveLength(2);
    await w.clock.advance(1);
    expect(w.calls.map((c) => c.t)).toEqual([0, 0, 200, 200]);
    // Still `loading` from the first pass: not set again; then ready.
    expect(w.log).toEqual(['state loading', 'state ready', 'ready']);
    expect(w.r.healthy).toBe(true);
    expect(w.clock.pending).toBe(0);
    expect(w.clock.keepAlive.every(Boolean)).toBe(true);
  });

  it('the pause before asking again is at least 100 ms even when the first step polls faster', async () => {
    let ours = false;
    const w = harness(frontend, { pollMs: 50, ownsPort: async () => ours });
    w.r.started();
    await w.clock.advance(0);
    ours = true;
    await w.clock.advance(99);
    expect(w.calls).toHaveLength(2);
    await w.clock.advance(1);
    expect(w.calls.map((c) => c.t)).toEqual([0, 0, 100, 100]);
    expect(w.log).toContain('ready');
  });

  it('a state changed meanwhile is set back to the step\'s on the second pass', async () => {
    let ours = false;
    const w = harness(frontend, { pollMs: 200, ownsPort: async () => ours });
    w.r.started();
    await w.clock.advance(0);
    w.setState('starting');
    ours = true;
    await w.clock.advance(200);
    expect(w.log).toEqual(['state loading', 'state loading', 'state ready', 'ready']);
  });

  it('the first pass sets the step\'s state even when the log already said it', async () => {
    const w = harness(frontend, { state: 'loading', ownsPort: async () => true });
    w.r.started();
    await w.clock.advance(0);
    expect(w.log).toEqual(['state loading', 'state ready', 'ready']);
  });

  it('the process exits while its port is judged: never ready', async () => {
    const w = harness(frontend, { ownsPort: async (_p, world) => (world.exit(), true) });
    w.r.started();
    await w.clock.advance(1000);
    expect(w.log).toEqual(['state loading']);
    expect(w.r.healthy).toBe(false);
  });

  it('the process exits (still counted running) during the last step: its port is not asked, never ready', async () => {
    const w = harness(frontend, { ownsPort: async () => true, answer: (url, world) => (url.endsWith('/v1/models') && world.exit(), frontendAnswers(url)) });
    w.r.started();
    await w.clock.advance(1000);
    expect(w.owned).toEqual([]);
    expect(w.log).toEqual(['state loading']);
  });

  it('the run is stopped while waiting to ask again: the pause ends at once, nothing more is asked', async () => {
    const w = harness(frontend, { pollMs: 200, ownsPort: async () => false });
    w.r.started();
    await w.clock.advance(0);
    expect(w.clock.pending).toBe(1);
    w.abort.abort();
    expect(w.clock.pending).toBe(0);
    await w.clock.advance(5000);
    expect(w.calls).toHaveLength(2);
    expect(w.log).toEqual(['state loading']);
  });

  it('the run is stopped while its port is judged: no pause is scheduled, nothing more is asked', async () => {
    const w = harness(frontend, { pollMs: 200, ownsPort: async (_p, world) => (world.abort.abort(), false) });
    w.r.started();
    await w.clock.advance(0);
    expect(w.clock.pending).toBe(0);
    await w.clock.advance(5000);
    expect(w.calls).toHaveLength(2);
    expect(w.log).toEqual(['state loading']);
  });
});

describe("a worker's wait for its registration line", () => {
  const notready = () => probe(503, { status: 'notready' });

  it('without the line, /health is first asked exactly 30 s after the KV line, on a timer that keeps the process alive', async () => {
    const w = harness(worker, { answer: notready });
    w.r.onLine(KV_LINE);
    expect(w.clock.keepAlive).toEqual([true]);
    await w.clock.advance(REGISTERED_WAIT_MS - 1);
    expect(w.calls).toHaveLength(0);
    await w.clock.advance(1);
    expect(w.calls.map((c) => c.t)).toEqual([REGISTERED_WAIT_MS]);
  });

  it('the line said twice: one poll, not two', async () => {
    const w = harness(worker, { answer: notready });
    w.r.onLine(KV_LINE);
    w.r.onLine(REGISTERED);
    w.r.onLine(REGISTERED);
    await w.clock.advance(0);
    expect(w.calls).toHaveLength(1);
    await w.clock.advance(REGISTERED_WAIT_MS);
    // 100 ms doubling to 2 s: the same pace as one poll.
    expect(w.calls.map((c) => c.t)).toEqual([0, 100, 300, 700, 1500, 3100, 5100, 7100, 9100, 11100, 13100, 15100, 17100, 19100, 21100, 23100, 25100, 27100, 29100]);
  });

  it('the run stopped before the 30 s are up: nothing is asked when they are', async () => {
    const w = harness(worker, { answer: notready });
    w.r.onLine(KV_LINE);
    w.stop();
    await w.clock.advance(REGISTERED_WAIT_MS * 2);
    expect(w.calls).toHaveLength(0);
  });

  it('aborted (stop, failure, deadline) before the 30 s are up: the timer is cleared at once', async () => {
    const w = harness(worker, { answer: notready });
    w.r.onLine(KV_LINE);
    expect(w.clock.pending).toBe(1);
    w.abort.abort();
    expect(w.clock.pending).toBe(0);
    await w.clock.advance(REGISTERED_WAIT_MS * 2);
    expect(w.calls).toHaveLength(0);
  });
});

describe('readinessPlan: the registration wait only for a worker with a KV line, /health and a registration line', () => {
  it('no KV line pattern: /health at the poll interval, no backoff, no registration wait', () => {
    const p = readinessPlan({ ...worker, ready: { http: 'http://w/health', registeredLine: REGISTERED_LINE } }, { frontendUrl: FRONTEND_URL, model: 'm' }, 50);
    expect(p.kvPattern).toBeNull();
    expect(p.registeredPattern).toBeUndefined();
    expect(p.registeredWaitMs).toBeUndefined();
    expect(p.steps).toHaveLength(1);
    expect(p.steps[0].intervalMs).toBe(50);
    expect(p.steps[0].backoffToMs).toBeUndefined();
  });

  it('no /health: no steps and no registration wait', () => {
    const p = readinessPlan({ ...worker, ready: { logPattern: KV_LINE_PATTERN, registeredLine: REGISTERED_LINE } }, { frontendUrl: FRONTEND_URL, model: 'm' }, 50);
    expect(p.steps).toEqual([]);
    expect(p.registeredPattern).toBeUndefined();
  });
});

describe('a line saying the model cannot be loaded', () => {
  const line = readFileSync(join(FIXTURES, 'samples', 'logs', 'frontend-1.6.1-model-materialization-failed.log'), 'utf8').trim();

  it('is told to the host with the error text; a host without modelError is not asked', () => {
    const w = harness(frontend, { modelError: true });
    w.r.onLine(line);
    expect(w.log).toEqual([expect.stringMatching(/^model-error tokenizer: .*tokenizer\.json: EOF while parsing a value at line 7 column 11$/)]);
    const quiet = harness(frontend);
    expect(() => quiet.r.onLine(line)).not.toThrow();
    expect(quiet.log).toEqual([]);
  });
});

describe("localPorts: the ports of this machine the steps ask, each once", () => {
  const steps = (...urls: string[]): HttpStep[] => urls.map((url) => ({ url, judge: () => true, intervalMs: 50, waitingFor: () => '' }));

  it('127.0.0.1, localhost, [::1] and 0.0.0.0 count; another host does not; each port once, in order', () => {
    expect(localPorts(steps(`http://127.0.0.1:${PORT}/live`, `http://127.0.0.1:${PORT}/v1/models`, 'http://localhost:18124/health', 'http://[::1]:18125/x', 'http://0.0.0.0:18126/x', 'http://10.0.0.5:18127/x', 'http://w/health')))
      .toEqual([PORT, 18124, 18125, 18126]);
  });

  it('no port: 80 for http, 443 for https', () => {
    expect(localPorts(steps('http://localhost/live'))).toEqual([80]);
    expect(localPorts(steps('https://localhost/live'))).toEqual([443]);
    expect(localPorts(steps('https://localhost:8443/live'))).toEqual([8443]);
  });

  it('port 0 and a URL that does not parse are left out', () => {
    expect(localPorts(steps('http://127.0.0.1:0/live', 'not a url', `http://localhost:${PORT}/`))).toEqual([PORT]);
    expect(localPorts([])).toEqual([]);
  });
});
