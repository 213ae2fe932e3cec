import { type Gate, verdict } from './types.js';

// A KV router with events routes by the cache only when workers publish KV events. When they do
// not, the router logs one warning (kv_event_publisher_disabled; after 30 s
// kv_event_source_not_observed) and falls back to load: cache hits at random level, no error
// (FACTS §4, §7). doctor's kv.events reads the workers' command lines and the frontend's log.

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
    if (c.status === 'fail' || c.status === 'warn') return verdict('fail', c.summary, evidence);
    if (c.status === 'skip') return verdict('unknown', c.summary, evidence);
    return verdict('pass', c.summary, evidence);
  },
};

export default gate;
