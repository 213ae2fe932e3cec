import { describe, expect, it } from 'vitest';
import check, { KV_EVENTS_FIX, MOCKER_KV_EVENTS_FIX } from '../../../src/doctor/checks/kv.events.js';
import type { FileFinding } from '../../../src/diagnose/types.js';
import type { LogSet } from '../../../src/doctor/types.js';
import { fakeFacts } from './facts-with-release.js';
import { routerPlan, routerRecipe, runOf } from './helpers.js';
import { finding, logSet } from './log-sets.js';

// kv.events as the user reads it when the router names workers: each diagnostic names only the
// workers ITS lines named, one worker is "it", two are listed with a comma; and the fix texts say
// what to do in full (the vLLM flag, the mocker's prefix caching, the approximate-mode way out).
const FE = '/runs/r/logs/frontend.log';
const A0 = '/runs/r/logs/agg-0.log';
const A1 = '/runs/r/logs/agg-1.log';
const DISABLED_TEXT = 'WARN kv_event_publisher_disabled: KV-event publishing is disabled';
const MISSING_TEXT = 'WARN diagnostic_code="kv_event_source_not_observed"';

/** A run's log set whose frontend log holds the given findings (with the ids each names) and whose workers announced 11 and 22. */
function namedLogs(fileFindings: FileFinding[]): LogSet {
  const base = logSet('run', [
    { path: FE, process: 'frontend', role: 'frontend', findings: fileFindings },
    { path: A0, process: 'agg-0', role: 'agg' },
    { path: A1, process: 'agg-1', role: 'agg' },
  ], fileFindings.map((f) => finding(f.code, FE, f.line, f.text, { count: f.count })));
  return { ...base, scan: { ...base.scan, workerIds: { [A0]: ['11'], [A1]: ['22'] } } };
}
const disabledOf = (ids?: string[]): FileFinding => ({ code: 'dynamo.kv-events-disabled', severity: 'warn', count: 1, line: 3, text: DISABLED_TEXT, ...(ids ? { workerIds: ids } : {}) });
const missingOf = (ids?: string[]): FileFinding => ({ code: 'dynamo.kv-source-missing', severity: 'warn', count: 1, line: 7, text: MISSING_TEXT, ...(ids ? { workerIds: ids } : {}) });
const judge = async (logs: LogSet, plan = routerPlan()) => check.run(fakeFacts({ run: runOf(plan, {}), logs }, { recipe: routerRecipe(), plan }));

describe('kv.events: which workers each router diagnostic names', () => {
  it('one worker named by kv_event_publisher_disabled is "it", and only that diagnostic\'s ids are named', async () => {
    // The source-missing line names agg-1; the disabled line names agg-0 alone.
    const r = await judge(namedLogs([disabledOf(['11']), missingOf(['22'])]));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('the router reports kv_event_publisher_disabled for agg-0: no KV events from it, routing ignores the cache (hits at random level)');
    expect(r.details).toEqual([`frontend (${FE}:3) (x1): ${DISABLED_TEXT}`, 'the router names agg-0 (worker_id=11)']);
    expect((r.evidence.diagnostics as { workers: unknown[] }[]).map((d) => d.workers)).toEqual([
      [{ workerId: '11', process: 'agg-0' }],
      [{ workerId: '22', process: 'agg-1' }],
    ]);
  });

  it('a disabled line naming no worker_id names nobody: no "the router names" line, no invented id', async () => {
    const r = await judge(namedLogs([disabledOf()]));
    expect(r.summary).toBe('the router reports kv_event_publisher_disabled: workers publish no KV events, routing ignores the cache (hits at random level)');
    expect(r.details).toEqual([`frontend (${FE}:3) (x1): ${DISABLED_TEXT}`]);
    expect((r.evidence.diagnostics as { workers: unknown[] }[])[0].workers).toEqual([]);
  });

  it('the router seeing no publisher names the workers its lines name, comma-separated', async () => {
    const r = await judge(namedLogs([missingOf(['22', '11'])]));
    expect(r.status).toBe('warn');
    expect(r.details).toEqual([
      `frontend (${FE}:7) (x1): ${MISSING_TEXT}`,
      'the router names agg-0 (worker_id=11), agg-1 (worker_id=22)',
    ]);
  });

  it('the frontend\'s approximate-mode flag counts wherever the frontend sits in the run record', async () => {
    const plan = routerPlan();
    const run = runOf(plan, {});
    const fe = run.record.processes.find((p) => p.role === 'frontend')!;
    fe.argv = [...fe.argv, '--no-router-kv-events'];
    // Workers first, frontend last: the flag is still the frontend's.
    run.record.processes = [...run.record.processes.filter((p) => p !== fe), fe];
    const r = await check.run(fakeFacts({ run, logs: logSet('run', [{ path: FE, process: 'frontend', role: 'frontend' }]) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('skip');
    expect(r.summary).toBe('the KV router runs in approximate mode (--no-router-kv-events): no KV events needed');
  });
});

describe('kv.events: before any log, two silent workers', () => {
  it('are both named, comma-separated', async () => {
    const plan = routerPlan();
    for (const p of plan.processes) {
      const i = p.argv.indexOf('--kv-events-config');
      if (i >= 0) p.argv.splice(i, 2);
    }
    const r = await check.run(fakeFacts({ logs: null }, { recipe: routerRecipe(), plan }));
    expect(r.summary).toBe('agg-0, agg-1 would publish no KV events to the KV router');
  });
});

describe('kv.events fix texts say the whole way out', () => {
  it('vLLM: the flag with enable_kv_cache_events, a port per worker, or approximate mode', () => {
    expect(KV_EVENTS_FIX).toContain('`--kv-events-config \'{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}\'`');
    expect(KV_EVENTS_FIX).toContain('a distinct endpoint port per worker');
    expect(KV_EVENTS_FIX).toContain('--set frontend.kvEvents=false');
    expect(KV_EVENTS_FIX).toContain('`dynamo-dev up agg-router-approx`');
  });

  it('mocker: drop --no-enable-prefix-caching, or approximate mode; never the vLLM flag', () => {
    expect(MOCKER_KV_EVENTS_FIX).toMatch(/^the mocker publishes KV events unless prefix caching is off: drop --no-enable-prefix-caching from the workers' args, /);
    expect(MOCKER_KV_EVENTS_FIX).toMatch(/or route without events: --set frontend\.kvEvents=false \(the frontend's --no-router-kv-events, approximate mode\)$/);
    expect(MOCKER_KV_EVENTS_FIX).not.toContain('--kv-events-config');
  });
});
