import { describe, expect, it } from 'vitest';
import type { HttpProbe } from '../../../src/host/types.js';
import type { Plan } from '../../../src/plan/types.js';
import type { DescendantRecord } from '../../../src/run/types.js';
import { basePlan, KV_LINE, plannedWorker, supervisorHarness } from '../../helpers/supervisor-harness.js';

// The moment a run becomes ready, and what may happen at that very moment: a stop (Ctrl-C, a
// teardown reading run.json), a death while a health answer is on its way, a mocker that is ready
// only when the frontend is. "ready" must be true when it is said, and said once, in the right order
// with run.json.

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describe('a stop at the very moment the last process turns ready', () => {
  it('Ctrl-C then: the run was never ready (run.json never says so), nothing is left ticking', async () => {
    const h = supervisorHarness();
    let stopped = false;
    h.sup.on('event', (e) => {
      if (!stopped && e.event === 'state' && h.sup.record.processes.every((p) => p.state === 'ready')) {
        stopped = true;
        void h.sup.stop('SIGINT');
      }
    });
    const running = h.sup.run();
    await h.allReady();
    await h.clock.advance(2000);
    expect(stopped).toBe(true);
    expect(await running).toMatchObject({ outcome: 'stopped', beforeReady: true });
    expect(h.of('ready')).toEqual([]);
    expect(h.writes).not.toContain('ready');
    expect(h.clock.pending).toBe(0);
  });

  it('teardown stopping a detached run as run.json first says ready: `ready` is not told after the stop began', async () => {
    const box: { stop?: () => void } = {};
    let asked = false;
    const h = supervisorHarness({
      detach: true, watch: true,
      deps: {
        writeRun: (_dir, rec) => {
          if (rec.state === 'ready' && !asked) {
            asked = true;
            box.stop!();
          }
        },
      },
    });
    box.stop = () => void h.sup.stop('SIGTERM');
    const running = h.sup.run();
    await h.allReady();
    await h.clock.advance(2000);
    expect(asked).toBe(true);
    expect(h.of('ready')).toEqual([]);
    expect(await running).toMatchObject({ outcome: 'stopped' });
    expect(h.sup.record.state).toBe('stopped');
  });
});

describe('ready and run.json', () => {
  it('detached and watching: run.json says ready before `ready` is told (nobody stays to say it)', async () => {
    const h = supervisorHarness({ detach: true, watch: true });
    let onDisk: string | undefined;
    h.sup.on('event', (e) => {
      if (e.event === 'ready') onDisk = h.writes.at(-1);
    });
    void h.sup.run();
    await h.allReady();
    expect(h.of('ready')).toHaveLength(1);
    expect(onDisk).toBe('ready');
    void h.sup.stop('SIGTERM');
    await h.clock.advance(2000);
  });

  it('in the foreground (and detached without watching) `ready` is told at once, without waiting for the run.json write', async () => {
    for (const detach of [false, true]) {
      const h = supervisorHarness({ detach });
      let onDisk: string | undefined;
      h.sup.on('event', (e) => {
        if (e.event === 'ready') onDisk = h.writes.at(-1);
      });
      const running = h.sup.run();
      await h.allReady();
      expect(h.of('ready')).toHaveLength(1);
      expect(onDisk).not.toBe('ready');
      expect(h.writes).toContain('ready');
      if (!detach) void h.sup.stop('SIGINT');
      await h.clock.advance(2000);
      await running;
    }
  });

  it('after ready, an engine process found by the 30 s re-scan is written to run.json', async () => {
    let found: DescendantRecord[] = [];
    const h = supervisorHarness({ deps: { descendants: (pid) => (pid === 101 ? found : []) } });
    void h.sup.run();
    await h.allReady();
    const readyAt = h.clock.now();
    found = [{ pid: 150, startTicks: 5150, cmd: 'VLLM::EngineCore' }];
    const writes = h.writes.length;
    await h.clock.advance(30_000 - (h.clock.now() - readyAt));
    expect(h.sup.record.processes[1].descendants).toEqual(found);
    expect(h.writes.length).toBe(writes + 1);
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
  });
});

describe('a death while a health answer is on its way', () => {
  it('a worker that died is never marked ready by an answer that arrives after its death', async () => {
    const health = deferred<HttpProbe>();
    const diagnosed = deferred<{ top: null }>();
    const h = supervisorHarness({
      get: (url) => (url === 'http://w/8081/health' ? (health.promise as unknown as HttpProbe) : undefined),
      deps: { diagnose: () => diagnosed.promise },
    });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(KV_LINE);
    await h.clock.advance(0); // its /health is asked, the answer is on its way
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0);
    health.resolve({ url: 'http://w/8081/health', ok: true, status: 200, body: { status: 'ready' }, error: null });
    await h.clock.advance(0);
    expect(h.states()['agg-0']).toBe('failed');
    diagnosed.resolve({ top: null });
    await h.clock.advance(2000);
    await running;
    expect(h.of('state').filter((e) => e.process === 'agg-0').map((e) => e.state)).toEqual(['starting', 'kv-allocated', 'failed']);
  });
});

describe('a worker ready only through the frontend (the mocker)', () => {
  it('is ready when the frontend is, not when another worker becomes ready first', async () => {
    const plan: Plan = {
      ...basePlan,
      processes: [
        basePlan.processes[0],
        plannedWorker('agg-0', 8081, []),
        { ...plannedWorker('mock-1', 8082, []), argv: ['python3', '-m', 'dynamo.mocker'], ready: { viaFrontend: true } },
      ],
    };
    const h = supervisorHarness({ plan });
    void h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(KV_LINE);
    h.healthy.add('http://w/8081/health');
    await h.clock.advance(200);
    expect(h.states()).toMatchObject({ frontend: 'loading', 'agg-0': 'ready' });
    expect(h.states()['mock-1']).not.toBe('ready');
    h.healthy.add('http://f/v1/models');
    await h.clock.advance(200);
    expect(h.states()).toEqual({ frontend: 'ready', 'agg-0': 'ready', 'mock-1': 'ready' });
    expect(h.of('ready')).toHaveLength(1);
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
  });
});
