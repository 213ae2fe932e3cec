import { type Gate, verdict } from './types.js';
import { KV_EVENTS_APPLIED } from '../kv-events-metric.js';

// A KV router with events routes by the cache only when workers publish KV events. When they do
// not, the router logs one warning (kv_event_publisher_disabled; after 30 s
// kv_event_source_not_observed) and falls back to load: cache hits at random level, no error
// (FACTS §4, §7). doctor's kv.events reads the workers' command lines and the frontend's log.
// No warning is not proof: a publisher the router cannot reach is reported only after a 30 s grace
// (kv_event_source_not_observed). So after the load the events must have been SEEN: the router's
// counter of events applied to its index (kv-events-metric.ts) above 0. Before the load a run may
// have stored nothing yet (up's one completion is shorter than a block), so only the warnings count.
// Before 1.4.0 the router logs neither line (plan/kv-diagnostics.ts): kv.events warns that its logs
// cannot show it, and only the counter after the load can.

const gate: Gate = {
  id: 'kv.events',
  title: 'the KV router gets KV events from its workers',
  judge(f) {
    const c = f.checks['kv.events'];
    const evidence = { routerMode: f.router.mode, kvEvents: f.router.kvEvents, check: c ? { status: c.status, summary: c.summary, ...c.evidence } : null };
    if (f.router.mode !== 'kv' || !f.router.kvEvents) {
      return verdict('pass', f.router.mode === 'kv' ? 'approximate KV routing: no events needed' : `router mode ${f.router.mode} uses no KV events`, evidence);
    }
    if (!c) return verdict('unknown', 'kv.events was not judged', evidence);
    // A release whose router logs no kv_event_publisher_disabled (before 1.4.0): its silence is no
    // evidence either way, so only the events counted after the load judge it.
    const unlogged = c.status === 'warn' && c.evidence.diagnosticsLogged === false;
    if (!unlogged && (c.status === 'fail' || c.status === 'warn')) return verdict('fail', c.summary, evidence);
    if (c.status === 'skip') return verdict('unknown', c.summary, evidence);
    if (f.kvEventsApplied === undefined) return verdict(unlogged ? 'unknown' : 'pass', `${c.summary} (events are counted after the load)`, evidence);
    const applied = f.kvEventsApplied;
    const seen = { ...evidence, eventsApplied: applied };
    if (applied === null) {
      return verdict('unknown', `${c.summary}; but the frontend's /metrics has no ${KV_EVENTS_APPLIED} counter, so no event was seen`, seen);
    }
    if (applied.ok === 0) {
      const rejected = applied.rejected > 0 ? ` (${applied.rejected} rejected)` : '';
      return verdict('fail', `no KV event reached the router's index during the run (${KV_EVENTS_APPLIED} 0${rejected}): routing ignored the cache, though no warning said so`, seen);
    }
    const workers = Object.keys(applied.byWorker).filter((w) => applied.byWorker[w] > 0).length;
    const counted = `the router applied ${applied.ok} KV event${applied.ok === 1 ? '' : 's'} from ${workers} worker${workers === 1 ? '' : 's'}`;
    return verdict('pass', unlogged ? `${counted} (Dynamo ${String(c.evidence.release)} logs no kv_event_publisher_disabled: the count is the evidence)` : `${c.summary}; ${counted}`, seen);
  },
};

export default gate;
