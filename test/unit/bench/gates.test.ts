import { describe, expect, it } from 'vitest';
import { GATES, firstFailed, judgeGates } from '../../../src/bench/gates/registry.js';
import type { GateFacts } from '../../../src/bench/gates/types.js';

// Each gate on a failing and a passing case; the facts are what src/run/bench-facts.ts reads from a
// live run (doctor's verdicts, the log findings, the run's losses).
const good: GateFacts = {
  engine: 'mocker',
  router: { mode: 'kv', kvEvents: true },
  workers: ['agg-0', 'agg-1'],
  checks: {
    'kv.allocated': { status: 'skip', summary: 'mocker workers do not log a KV cache size', evidence: {} },
    'kv.events': { status: 'pass', summary: '2 workers publish KV events; no router diagnostic in run X', evidence: {} },
    'frontend.models': { status: 'pass', summary: '2 of 2 workers counted; http://127.0.0.1:8000/v1/models lists M', evidence: { workers: { seen: 2, expected: 2 } } },
  },
  lockWaits: [],
  lost: [],
  model: 'M',
  tokenizer: 'M',
  reference: { variant: 'kv-events', model: 'M', tokenizer: 'M' },
};
const gate = (f: GateFacts, id: string) => judgeGates(f).find((g) => g.id === id)!;

describe('bench gates', () => {
  it('all pass on a healthy run, in the report\'s order', () => {
    const gs = judgeGates(good);
    expect(gs.map((g) => g.id)).toEqual(['model.same', 'processes.alive', 'workers.ready', 'kv.events', 'hf.no-lock-wait']);
    expect(gs.every((g) => g.status === 'pass')).toBe(true);
    expect(firstFailed(gs)).toBeNull();
  });

  it('workers.ready fails when the frontend counts fewer workers, or a worker logged no KV', () => {
    const fe = { status: 'fail' as const, summary: 'the frontend counts 1 of the 2 planned workers', evidence: {} };
    const g = gate({ ...good, checks: { ...good.checks, 'frontend.models': fe } }, 'workers.ready');
    expect(g).toMatchObject({ status: 'fail', summary: 'frontend: the frontend counts 1 of the 2 planned workers' });
    const kv = { status: 'fail' as const, summary: 'agg-1 never logged its KV cache size', evidence: { tokens: { 'agg-0': 100, 'agg-1': null } } };
    const g2 = gate({ ...good, checks: { ...good.checks, 'kv.allocated': kv } }, 'workers.ready');
    expect(g2.status).toBe('fail');
    expect(g2.evidence.kvAllocated).toMatchObject({ tokens: { 'agg-1': null } });
    expect(gate({ ...good, checks: {} }, 'workers.ready').status).toBe('unknown');
  });

  it('kv.events fails on kv_event_publisher_disabled for a KV router with events; other routers need none', () => {
    const c = { status: 'fail' as const, summary: 'the router reports kv_event_publisher_disabled for agg-0', evidence: { diagnostics: [{ code: 'dynamo.kv-events-disabled' }] } };
    const bad = { ...good, checks: { ...good.checks, 'kv.events': c } };
    expect(gate(bad, 'kv.events')).toMatchObject({ status: 'fail', summary: c.summary });
    expect(gate(bad, 'kv.events').evidence.check).toMatchObject({ diagnostics: [{ code: 'dynamo.kv-events-disabled' }] });
    expect(gate({ ...bad, router: { mode: 'round-robin', kvEvents: true } }, 'kv.events').status).toBe('pass');
    expect(gate({ ...bad, router: { mode: 'kv', kvEvents: false } }, 'kv.events').summary).toMatch(/approximate/);
    const warn = { status: 'warn' as const, summary: 'the router sees no KV-event publishers', evidence: {} };
    expect(gate({ ...good, checks: { ...good.checks, 'kv.events': warn } }, 'kv.events').status).toBe('fail');
  });

  it('kv.events after the load: fails when the router applied no KV event (no warning needed), unknown without the counter, passes with events seen', () => {
    const after = { ...good, lost: [] };
    const none = gate({ ...after, kvEventsApplied: { ok: 0, rejected: 0, byWorker: {} } }, 'kv.events');
    expect(none.status).toBe('fail');
    expect(none.summary).toBe("no KV event reached the router's index during the run (dynamo_component_kv_cache_events_applied 0): routing ignored the cache, though no warning said so");
    expect(none.evidence.eventsApplied).toEqual({ ok: 0, rejected: 0, byWorker: {} });
    const rejected = gate({ ...after, kvEventsApplied: { ok: 0, rejected: 7, byWorker: {} } }, 'kv.events');
    expect(rejected.summary).toMatch(/applied 0 \(7 rejected\)/);
    const seen = gate({ ...after, kvEventsApplied: { ok: 12, rejected: 0, byWorker: { a: 5, b: 7 } } }, 'kv.events');
    expect(seen).toMatchObject({ status: 'pass', summary: '2 workers publish KV events; no router diagnostic in run X; the router applied 12 KV events from 2 workers' });
    expect(gate({ ...after, kvEventsApplied: { ok: 1, rejected: 0, byWorker: { a: 1, b: 0 } } }, 'kv.events').summary).toMatch(/applied 1 KV event from 1 worker$/);
    const noCounter = gate({ ...after, kvEventsApplied: null }, 'kv.events');
    expect(noCounter.status).toBe('unknown');
    expect(noCounter.summary).toMatch(/has no dynamo_component_kv_cache_events_applied counter/);
    // Before the load nothing is counted yet: the warnings alone decide.
    expect(gate(good, 'kv.events')).toMatchObject({ status: 'pass', summary: expect.stringMatching(/events are counted after the load\)$/) });
    // A warning still wins over a counter (the more specific reason), and other routers need no events.
    const disabled = { status: 'fail' as const, summary: 'the router reports kv_event_publisher_disabled', evidence: {} };
    expect(gate({ ...after, checks: { ...good.checks, 'kv.events': disabled }, kvEventsApplied: { ok: 0, rejected: 0, byWorker: {} } }, 'kv.events').summary).toBe(disabled.summary);
    expect(gate({ ...after, router: { mode: 'round-robin', kvEvents: true }, kvEventsApplied: null }, 'kv.events').status).toBe('pass');
  });

  it('kv.events on a release whose router logs no kv_event_publisher_disabled (before 1.4.0): unknown before the load, the counter decides after it', () => {
    const unlogged = { status: 'warn' as const, summary: 'Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do): ...', evidence: { release: '1.3.1', diagnosticsLogged: false } };
    const before = { ...good, checks: { ...good.checks, 'kv.events': unlogged } };
    expect(gate(before, 'kv.events')).toMatchObject({ status: 'unknown', summary: `${unlogged.summary} (events are counted after the load)` });
    const after = { ...before, lost: [] };
    expect(gate({ ...after, kvEventsApplied: { ok: 12, rejected: 0, byWorker: { a: 5, b: 7 } } }, 'kv.events')).toMatchObject({
      status: 'pass', summary: 'the router applied 12 KV events from 2 workers (Dynamo 1.3.1 logs no kv_event_publisher_disabled: the count is the evidence)',
    });
    expect(gate({ ...after, kvEventsApplied: { ok: 0, rejected: 0, byWorker: {} } }, 'kv.events').status).toBe('fail');
    expect(gate({ ...after, kvEventsApplied: null }, 'kv.events').status).toBe('unknown');
    // Its argv still fails it when a worker publishes nothing (observed on any release).
    const argv = { status: 'fail' as const, summary: 'agg-0 publish no KV events to the KV router', evidence: { release: '1.3.1', diagnosticsLogged: false } };
    expect(gate({ ...good, checks: { ...good.checks, 'kv.events': argv } }, 'kv.events').status).toBe('fail');
  });

  it('processes.alive fails naming a process that died during the load; unknown before any load', () => {
    const g = gate({ ...good, lost: [{ name: 'agg-1', how: 'was killed by SIGKILL', at: '2026-12-05T14:00:00Z' }] }, 'processes.alive');
    expect(g).toMatchObject({ status: 'fail', summary: 'agg-1 was killed by SIGKILL during the load: the run was degraded' });
    expect(gate({ ...good, lost: null }, 'processes.alive').status).toBe('unknown');
  });

  it('hf.no-lock-wait fails on a lock wait, quoting the line', () => {
    const w = { code: 'hf.lock-wait', count: 3, file: 'agg-1', line: 12, text: 'Still waiting to acquire lock on /h/.locks/x.lock (elapsed: 30.7 seconds)' };
    const g = gate({ ...good, lockWaits: [w] }, 'hf.no-lock-wait');
    expect(g.status).toBe('fail');
    expect(g.summary).toBe(`hf.lock-wait in agg-1:12 (x3): ${w.text}`);
  });

  it('model.same fails on another model or tokenizer than the first variant; the first is the reference', () => {
    const g = gate({ ...good, model: 'N', tokenizer: 'N' }, 'model.same');
    expect(g.status).toBe('fail');
    expect(g.summary).toBe('differs from the first variant: model N (kv-events: M); tokenizer N (kv-events: M)');
    expect(gate({ ...good, reference: null }, 'model.same').status).toBe('pass');
  });

  it('a judge that throws is unknown with the reason, never a pass', () => {
    const broken = { id: 'x', title: 'x', judge: () => { throw new Error('boom'); } };
    expect(judgeGates(good, [broken])[0]).toMatchObject({ status: 'unknown', summary: 'the gate could not judge: boom' });
    expect(GATES.length).toBe(5);
  });
});
