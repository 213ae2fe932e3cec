import { describe, expect, it } from 'vitest';
import type { FollowOptions } from '../../../src/run/follow.js';
import type { Plan } from '../../../src/plan/types.js';
import type { SupervisorDeps } from '../../../src/run/supervisor-deps.js';
import { basePlan, KV_LINE, plannedWorker, supervisorHarness } from '../../helpers/supervisor-harness.js';

// What up says when things go oddly: run.json that cannot be written, a listener or a crash that
// throws something that is not an Error, the router's KV-events hint word for word; and how starts
// behave when a log already holds lines as its follower opens it (a reused log, read at once).

const lockLine = '2026-10-07T04:58:21.118004Z  INFO filelock: Still waiting to acquire lock on /hf/.locks/x.lock (elapsed: 10.1 seconds)';

describe('odd errors become warnings or failures, never a hang', () => {
  it('run.json that cannot be written after the start is a warning naming the error; the run goes on', async () => {
    let n = 0;
    const h = supervisorHarness({
      deps: {
        writeRun: () => {
          if (n++ > 0) throw new Error('EROFS: read-only file system');
        },
      },
    });
    void h.sup.run();
    await h.clock.advance(0);
    expect(h.warnings[0]).toBe('cannot write run.json: EROFS: read-only file system');
    expect(h.states()).toMatchObject({ frontend: 'loading', 'agg-0': 'starting' });
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
  });

  it('a listener throwing null: the warning says null', async () => {
    const h = supervisorHarness();
    let thrown = false;
    h.sup.on('event', (e: { event: string }) => {
      if (e.event === 'starting' && !thrown) {
        thrown = true;
        throw null;
      }
    });
    void h.sup.run();
    await h.clock.advance(0);
    expect(h.warnings).toEqual(['cannot show the starting event: null']);
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
  });

  it('a crash with null (a rejected promise without a reason) stops the run with that in the reason', async () => {
    const h = supervisorHarness();
    const running = h.sup.run();
    await h.clock.advance(0);
    void h.sup.crash(null);
    await h.clock.advance(2000);
    expect(await running).toEqual({ outcome: 'failed', code: 1, reason: 'unexpected error: null' });
  });

  it('the router\'s hint that a worker publishes no KV events, word for word', async () => {
    const h = supervisorHarness();
    void h.sup.run();
    await h.clock.advance(0);
    h.lines.get('frontend')!('2026-10-07T05:12:20.704420Z  WARN dynamo_llm::kv_router: KV-event publishing is disabled diagnostic_code="kv_event_publisher_disabled" worker_id=1');
    expect(h.of('hint')).toEqual([{
      event: 'hint', process: 'frontend', code: 'kv_event_publisher_disabled',
      text: 'a worker publishes no KV events: the KV router ignores the cache (see `dynamo-dev doctor --only kv.events`)',
    }]);
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
  });
});

describe('logs that already hold lines when their follower opens them', () => {
  const plan: Plan = { ...basePlan, processes: [basePlan.processes[0], plannedWorker('agg-0', 8081, []), plannedWorker('agg-1', 8082, []), plannedWorker('agg-2', 8083, [])] };
  /** A follower that delivers the log's present lines at once, as followFile's first read does. */
  const readAtOnce = (present: Record<string, string[]>, seen: FollowOptions[] = []): Partial<SupervisorDeps> => ({
    follow: (path, onLine, opts) => {
      seen.push(opts ?? {});
      for (const l of present[path.replace(/^.*\//, '').replace(/\.log$/, '')] ?? []) onLine(l);
      return { drain() {}, stop() {}, offset: 0 };
    },
  });

  it('a process started by another\'s line during the same start round is started once', async () => {
    const h = supervisorHarness({ plan, deps: readAtOnce({ 'agg-0': [KV_LINE] }) });
    void h.sup.run();
    await h.clock.advance(0);
    expect(h.calls.filter((c) => c.startsWith('spawn'))).toEqual(['spawn frontend', 'spawn agg-0', 'spawn agg-1', 'spawn agg-2']);
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
  });

  it('a line that fails the run during the start round: nothing more is started', async () => {
    const h = supervisorHarness({ plan, deps: readAtOnce({ 'agg-0': [KV_LINE], 'agg-1': [lockLine] }) });
    const running = h.sup.run();
    await h.clock.advance(0);
    await h.clock.advance(2000);
    expect(await running).toMatchObject({ outcome: 'failed', reason: 'agg-1 is blocked on the Hugging Face download lock /hf/.locks/x.lock' });
    expect(h.calls.filter((c) => c.startsWith('spawn'))).toEqual(['spawn frontend', 'spawn agg-0', 'spawn agg-1']);
    expect(h.states()['agg-2']).toBe('stopped');
  });

  it('each log is followed with a 1 s fallback poll (fs.watch delivers lines at once)', async () => {
    const seen: FollowOptions[] = [];
    const h = supervisorHarness({ deps: readAtOnce({}, seen) });
    void h.sup.run();
    await h.clock.advance(0);
    expect(seen).toEqual([{ pollMs: 1000 }, { pollMs: 1000 }]);
    void h.sup.stop('SIGINT');
    await h.clock.advance(2000);
  });
});

describe('a mocker listed before the frontend', () => {
  it('the deadline says what the frontend is doing, wherever the frontend is in the plan', async () => {
    const plan: Plan = {
      ...basePlan,
      processes: [{ ...plannedWorker('mock-0', 8081, []), argv: ['python3', '-m', 'dynamo.mocker'], ready: { viaFrontend: true } }, basePlan.processes[0]],
    };
    const h = supervisorHarness({ plan, readyTimeoutMs: 3000 });
    const running = h.sup.run();
    await h.clock.advance(3000);
    await h.clock.advance(2000);
    expect(await running).toMatchObject({
      outcome: 'failed', reason: 'not ready after 3 s: mock-0 is still not counted by the frontend, which is waiting for m in /v1/models (HTTP 200 {"data":[]})',
    });
  });
});
