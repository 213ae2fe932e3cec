import { describe, expect, it } from 'vitest';
import { ProcessReadiness, readinessPlan, type ReadinessHost } from '../../../src/run/policy/readiness.js';
import type { HttpProbe } from '../../../src/host/types.js';
import type { PlannedProcess } from '../../../src/plan/types.js';
import type { ProcessState } from '../../../src/run/types.js';
import { KV_LINE_PATTERN, REGISTERED_LINE } from '../../../src/plan/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';

// How one process proves it is ready, step by step (src/run/policy/readiness.ts), on a fake clock
// and fake HTTP: what the deadline message says it waits for, the pace and timeout of each step, and
// that nothing changes state once the run stops or the process exits.

const KV_LINE = 'INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens';
/** ai-dynamo 1.6.1's line once the worker's generate endpoint is served (test/fixtures/engine/cpu-worker-ready.log). */
const REGISTERED = "2026-12-07T07:51:55.717613Z  INFO dynamo_runtime::pipeline::network::ingress::shared_tcp_endpoint: Registered endpoint 'dynamo.backend.generate' with shared TCP server on 127.0.0.1:45797";
const run = { frontendUrl: 'http://f', model: 'm' };
const worker: PlannedProcess = {
  name: 'agg-0', role: 'agg', argv: ['python3'], env: {}, ports: { system: 8081 }, gpuMemoryUtilization: 0.4, waitFor: [],
  ready: { logPattern: KV_LINE_PATTERN, http: 'http://w/health' }, publishesKvEvents: false, kvTokensEstimate: null,
};
const frontend = (ready: PlannedProcess['ready']): PlannedProcess => ({ ...worker, name: 'frontend', role: 'frontend', ready });
const probe = (status: number, body: unknown, error: string | null = null): HttpProbe => ({ url: 'u', ok: status > 0 && status < 400, status, body, error });

function harness(spec: PlannedProcess, answer: (url: string, n: number) => HttpProbe, pollMs = 50) {
  const clock = new FakeClock();
  const calls: { t: number; url: string; timeoutMs: number; body?: unknown }[] = [];
  const log: string[] = [];
  let state: ProcessState = 'starting';
  let running = true;
  let exited = false;
  const host: ReadinessHost = {
    state: () => state,
    setState: (s) => {
      state = s;
      log.push(`state ${s}`);
    },
    kvLine: (t) => log.push(`kv ${t}`),
    changed: () => log.push('changed'),
    gateOpened: () => log.push('gate'),
    lockWait: (w) => log.push(`lock ${w.lockPath}`),
    ready: () => log.push('ready'),
    running: () => running,
    exited: () => exited,
  };
  const ask = async (url: string, timeoutMs: number, body?: unknown) => {
    calls.push({ t: clock.now(), url, timeoutMs, ...(body === undefined ? {} : { body }) });
    return answer(url, calls.filter((c) => c.url === url).length);
  };
  const r = new ProcessReadiness(readinessPlan(spec, run, pollMs), host, { get: (url, timeoutMs) => ask(url, timeoutMs), post: (url, body, timeoutMs) => ask(url, timeoutMs, body), clock }, new AbortController().signal);
  return {
    r, clock, calls, log,
    setState: (s: ProcessState) => void (state = s),
    stop: () => void (running = false),
    exit: () => void (exited = true),
  };
}

describe('what the deadline message says a process waits for', () => {
  const waitingAfter = async (answer: HttpProbe) => {
    const h = harness(worker, () => answer);
    h.r.onLine(KV_LINE);
    h.r.onLine(REGISTERED);
    await h.clock.advance(0);
    return h.r.waitingFor;
  };

  it('before any answer; an error; the status and body of the last answer', async () => {
    const h = harness(worker, () => probe(503, null));
    expect(h.r.waitingFor).toBeNull();
    expect(await waitingAfter(probe(0, null, 'ECONNREFUSED'))).toBe('answering ready on http://w/health (ECONNREFUSED)');
    expect(await waitingAfter(probe(503, { status: 'notready' }))).toBe('answering ready on http://w/health (HTTP 503 {"status":"notready"})');
    expect(await waitingAfter(probe(502, 'Bad Gateway'))).toBe('answering ready on http://w/health (HTTP 502 Bad Gateway)');
    expect(await waitingAfter(probe(500, ''))).toBe('answering ready on http://w/health (HTTP 500)');
  });

  it('a body of exactly 160 characters is shown whole; a longer one is cut there with "..."', async () => {
    const exact = 'e'.repeat(160);
    expect(await waitingAfter(probe(503, exact))).toBe(`answering ready on http://w/health (HTTP 503 ${exact})`);
    expect(await waitingAfter(probe(503, `${exact}X`))).toBe(`answering ready on http://w/health (HTTP 503 ${exact}...)`);
  });

  it('the frontend counting workers: how many it sees of how many, and the answer only when it was an error', async () => {
    const readyBody = (n: number) => ({ model: 'm', ready: n > 0, namespaces: { dynamo: { worker_types: { aggregated: { workers: n } } } } });
    const h = harness(frontend({ http: 'http://f/v1/models', modelReady: 'http://f/v1/models/m/ready', workers: 2 }), (url, n) => {
      if (url.endsWith('/live')) return probe(200, { status: 'live' });
      if (url.endsWith('/v1/models')) return probe(200, { data: [{ id: 'm' }] });
      return n === 1 ? probe(404, { message: 'Model not found' }) : probe(200, readyBody(1));
    });
    h.r.started();
    await h.clock.advance(0);
    expect(h.r.waitingFor).toBe('counting workers: it sees ? of 2 (HTTP 404 {"message":"Model not found"})');
    await h.clock.advance(100);
    expect(h.r.waitingFor).toBe('counting workers: it sees 1 of 2');
    expect(h.calls.filter((c) => c.url.endsWith('/ready')).map((c) => c.t)).toEqual([0, 50, 100]);
  });

  it('the frontend\'s first steps say what they wait for in words', async () => {
    const h = harness(frontend({ http: 'http://f/v1/models' }), (url) => (url.endsWith('/live') ? probe(503, null, null) : probe(200, { data: [] })));
    h.r.started();
    await h.clock.advance(0);
    expect(h.r.waitingFor).toBe('answering /live (HTTP 503 null)');
  });
});

describe('the steps of the frontend', () => {
  it('without a model list URL in the plan: /v1/models of the frontend; without a /ready URL: /health counts the workers', async () => {
    const h = harness(frontend({ workers: 1 }), (url) => {
      if (url.endsWith('/live')) return probe(200, { status: 'live' });
      if (url.endsWith('/v1/models')) return probe(200, { data: [{ id: 'm' }] });
      return probe(200, { status: 'healthy', instances: [{ endpoint: 'generate', instance_id: 7 }] });
    });
    h.r.started();
    await h.clock.advance(0);
    expect(h.calls.map((c) => c.url)).toEqual(['http://f/live', 'http://f/v1/models', 'http://f/health']);
    expect(h.log).toEqual(['state loading', 'state ready', 'ready']);
    expect(h.r.waitingFor).toBe('counting workers: it sees 1 of 1');
  });

  it('the model list is polled no faster than 100 ms, the worker count at the poll interval (what ready waits on last), the completion no faster than 250 ms, with a 30 s timeout', async () => {
    // Two workers: the model is listed from t=100, the second worker counted at the fourth look.
    let listed = false;
    let looks = 0;
    const c = harness(frontend({ http: 'http://f/v1/models', workers: 2 }), (url) => {
      if (url.endsWith('/live')) return probe(200, { status: 'live' });
      if (url.endsWith('/v1/models')) return probe(200, { data: listed ? [{ id: 'm' }] : [] });
      looks++;
      const instances = [{ endpoint: 'generate', instance_id: 7 }, ...(looks >= 4 ? [{ endpoint: 'generate', instance_id: 8 }] : [])];
      return probe(200, { status: 'healthy', instances });
    }, 20);
    c.r.started();
    await c.clock.advance(0);
    listed = true;
    await c.clock.advance(400);
    expect(c.calls.filter((x) => x.url.endsWith('/v1/models')).map((x) => x.t)).toEqual([0, 100]);
    expect(c.calls.filter((x) => x.url.endsWith('/health')).map((x) => x.t)).toEqual([100, 120, 140, 160]);
    expect(c.log).toEqual(['state loading', 'state ready', 'ready']);

    let answers = false;
    const h = harness(frontend({ http: 'http://f/v1/models', workers: 1, completion: true }), (url) => {
      if (url.endsWith('/live')) return probe(200, { status: 'live' });
      if (url.endsWith('/v1/models')) return probe(200, { data: [{ id: 'm' }] });
      if (url.endsWith('/health')) return probe(200, { status: 'healthy', instances: [{ endpoint: 'generate', instance_id: 7 }] });
      return answers ? probe(200, { choices: [{ index: 0 }] }) : probe(503, { error: 'no instances' });
    }, 20);
    h.r.started();
    await h.clock.advance(600);
    const posts = h.calls.filter((c) => c.url.endsWith('/chat/completions'));
    expect(posts.map((c) => c.t)).toEqual([0, 250, 500]);
    expect(posts[0]).toMatchObject({ timeoutMs: 30_000, body: { model: 'm', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: false } });
    expect(h.calls.find((c) => c.url.endsWith('/live'))!.timeoutMs).toBe(1000);
    expect(h.r.waitingFor).toBe('answering a first chat completion (HTTP 503 {"error":"no instances"})');
    answers = true;
    await h.clock.advance(250);
    expect(h.log).toEqual(['state loading', 'state ready', 'ready']);
  });

  it('a poll interval above 100 ms is kept for the slower steps too', async () => {
    const h = harness(frontend({ http: 'http://f/v1/models' }), (url, n) => (url.endsWith('/live') ? probe(200, { status: 'live' }) : probe(200, { data: n < 3 ? [] : [{ id: 'm' }] })), 150);
    h.r.started();
    await h.clock.advance(1000);
    expect(h.calls.filter((c) => c.url.endsWith('/v1/models')).map((c) => c.t)).toEqual([0, 150, 300]);
  });
});

describe('workers without HTTP readiness', () => {
  it('a worker with a KV line and no health URL is ready at its KV line', async () => {
    const h = harness({ ...worker, ready: { logPattern: KV_LINE_PATTERN } }, () => probe(503, null));
    h.r.started();
    h.r.onLine(KV_LINE);
    await h.clock.advance(0);
    expect(h.log).toEqual(['kv 14816', 'state kv-allocated', 'gate', 'state ready', 'ready']);
    expect(h.calls).toEqual([]);
  });

  it('a process with neither a KV line nor a health URL is ready as soon as it started, and opens its gate then', async () => {
    const h = harness({ ...worker, ready: {} }, () => probe(503, null));
    expect(h.r.gateOpen).toBe(false);
    h.r.started();
    await h.clock.advance(0);
    expect(h.log).toEqual(['state ready', 'ready']);
    expect(h.r.gateOpen).toBe(true);
  });
});

describe('lines that change nothing', () => {
  it('a loading line once the worker is past starting; a lock wait while already loading reports the wait but keeps the state', () => {
    const h = harness(worker, () => probe(503, null));
    h.setState('kv-allocated');
    h.r.onLine('INFO Loading weights took 1.2 s');
    expect(h.log).toEqual([]);
    h.setState('loading');
    h.r.onLine('Still waiting to acquire lock on /hf/.locks/y.lock');
    expect(h.log).toEqual(['lock /hf/.locks/y.lock']);
  });

  it('nothing at all once the run is stopping', () => {
    const h = harness(worker, () => probe(503, null));
    h.stop();
    h.r.onLine(KV_LINE);
    h.r.onLine('Still waiting to acquire lock on /hf/.locks/y.lock');
    expect(h.log).toEqual([]);
    expect(h.r.kvSeen).toBe(false);
  });

  it('a second KV line is not counted again', async () => {
    const h = harness(worker, () => probe(503, null));
    h.r.onLine(KV_LINE);
    h.r.onLine(KV_LINE.replace('14,816', '9,000'));
    await h.clock.advance(0);
    expect(h.log.filter((l) => l.startsWith('kv'))).toEqual(['kv 14816']);
  });
});

describe('no state change after the run stops or the process exits', () => {
  const steps = () => frontend({ http: 'http://f/v1/models' });
  const listedAfter = (n0: number) => (url: string, n: number) => (url.endsWith('/live') ? probe(200, { status: 'live' }) : probe(200, { data: n < n0 ? [] : [{ id: 'm' }] }));

  it.each([
    ['stopping', 'stop'],
    ['exiting', 'exit'],
  ] as const)('%s between two steps: the next step\'s state is not set and the process is never ready', async (_, end) => {
    const h = harness(steps(), (url) => {
      if (url.endsWith('/live')) {
        h[end]();
        return probe(200, { status: 'live' });
      }
      return probe(200, { data: [{ id: 'm' }] });
    });
    h.r.started();
    await h.clock.advance(500);
    expect(h.log).toEqual([]);
    expect(h.calls.map((c) => c.url)).toEqual(['http://f/live']);
  });

  it('stopping or exiting during the last step: never ready, never healthy', async () => {
    for (const end of ['stop', 'exit'] as const) {
      const h = harness(steps(), (url, n) => {
        if (url.endsWith('/v1/models') && n === 2) h[end]();
        return listedAfter(2)(url, n);
      });
      h.r.started();
      await h.clock.advance(500);
      expect(h.log).toEqual(['state loading']);
      expect(h.r.healthy).toBe(false);
    }
  });
});

describe('confirmation by the frontend (mocker workers)', () => {
  const mocker: PlannedProcess = { ...worker, ready: { viaFrontend: true } };
  it('a mocker worker is ready when confirmed, once; never before it is started; polling nothing itself', async () => {
    const h = harness(mocker, () => probe(503, null));
    h.r.started();
    await h.clock.advance(100);
    expect(h.calls).toEqual([]);
    h.r.confirm();
    h.r.confirm();
    expect(h.log).toEqual(['state ready']);
    expect(h.r.gateOpen).toBe(true);
  });
  it('a confirmation means nothing to a worker with its own readiness, to a stopping run or to an exited process', () => {
    const own = harness(worker, () => probe(503, null));
    own.r.confirm();
    expect(own.log).toEqual([]);
    const stopping = harness(mocker, () => probe(503, null));
    stopping.stop();
    stopping.r.confirm();
    expect(stopping.log).toEqual([]);
    const gone = harness(mocker, () => probe(503, null));
    gone.exit();
    gone.r.confirm();
    expect(gone.log).toEqual([]);
  });
});

// A worker's system server answers "notready" with 503 until its endpoint is registered, and logs
// one `ERROR tower_http::trace::on_failure ... 503` per such answer into the log doctor judges
// (FACTS §10: 98 lines in 5 s at the old 50 ms pace). Readiness asks once the worker says it can answer.
describe('quiet readiness: a worker is asked once its log says it registered, and less often while it says notready', () => {
  // As buildPlan makes a vLLM worker's readiness (a plan recorded before has no registeredLine and polls as before).
  const quiet: PlannedProcess = { ...worker, ready: { ...worker.ready, registeredLine: REGISTERED_LINE } };
  const harnessQ = (answer: (url: string, n: number) => HttpProbe) => harness(quiet, answer);
  const healthUrls = (h: ReturnType<typeof harness>) => h.calls.filter((c) => c.url === 'http://w/health');

  it('no /health request between the KV line and the registration line, however long; one right after it', async () => {
    const h = harnessQ(() => probe(200, { status: 'ready' }));
    h.r.onLine(KV_LINE);
    await h.clock.advance(29_999);
    expect(healthUrls(h)).toHaveLength(0);
    expect(h.r.waitingFor).toBe('its log to say it registered its generate endpoint (then /health is asked)');
    h.r.onLine(REGISTERED);
    await h.clock.advance(0);
    expect(healthUrls(h)).toHaveLength(1);
    expect(h.log).toContain('ready');
  });

  it('the older line (`Registered endpoint dyn://...generate`) opens the gate too; a line for another endpoint does not', async () => {
    const h = harnessQ(() => probe(200, { status: 'ready' }));
    h.r.onLine(KV_LINE);
    h.r.onLine("2026-12-07T07:51:55.717788Z  INFO shared_tcp_endpoint: Registered endpoint 'dynamo.backend.get_perf_metrics' with shared TCP server on 127.0.0.1:45797");
    await h.clock.advance(100);
    expect(healthUrls(h)).toHaveLength(0);
    h.r.onLine('2026-10-07T05:40:20.551902Z  INFO main.init: Registered endpoint dyn://dynamo.backend.generate for model Qwen/Qwen3-0.6B');
    await h.clock.advance(0);
    expect(healthUrls(h)).toHaveLength(1);
  });

  it('a release that logs no registration line is asked 30 s after its KV line (not before), and the line before the KV line does not count', async () => {
    const h = harnessQ(() => probe(200, { status: 'ready' }));
    h.r.onLine(REGISTERED);
    h.r.onLine(KV_LINE);
    await h.clock.advance(29_999);
    expect(healthUrls(h)).toHaveLength(0);
    await h.clock.advance(1);
    expect(healthUrls(h)).toHaveLength(1);
  });

  it('while it answers 503 the pace doubles from 100 ms up to 2 s: 10 requests in 12 s, not 240', async () => {
    const h = harnessQ(() => probe(503, { status: 'notready' }));
    h.r.onLine(KV_LINE);
    h.r.onLine(REGISTERED);
    await h.clock.advance(12_000);
    const t = healthUrls(h).map((c) => c.t);
    const t0 = t[0];
    expect(t.map((x) => x - t0)).toEqual([0, 100, 300, 700, 1500, 3100, 5100, 7100, 9100, 11100]);
  });
});

describe('a plan without registeredLine (recorded before it existed) polls as before', () => {
  it('right after the KV line, every 50 ms', async () => {
    const h = harness(worker, () => probe(503, { status: 'notready' }));
    h.r.onLine(KV_LINE);
    await h.clock.advance(200);
    expect(h.calls.map((c) => c.t)).toEqual([0, 50, 100, 150, 200]);
  });
});
