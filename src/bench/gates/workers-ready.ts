import { type Gate, verdict } from './types.js';

// Every planned worker allocated its KV cache (logged its size: doctor's kv.allocated) and the
// frontend counts every one of them (frontend.models). The measurement a script would otherwise
// take on one worker of two: the second blocked on a lock, or never discovered.

const gate: Gate = {
  id: 'workers.ready',
  title: 'every planned worker allocated KV and is counted by the frontend',
  judge(f) {
    const kv = f.checks['kv.allocated'];
    const fe = f.checks['frontend.models'];
    const evidence = {
      workers: f.workers,
      kvAllocated: kv ? { status: kv.status, summary: kv.summary, tokens: kv.evidence.tokens ?? null } : null,
      frontend: fe ? { status: fe.status, summary: fe.summary, workers: fe.evidence.workers ?? null } : null,
    };
    if (!fe) return verdict('unknown', 'the frontend was not asked which workers it counts', evidence);
    if (fe.status !== 'pass') return verdict('fail', `frontend: ${fe.summary}`, evidence);
    // The mocker logs no KV cache size (kv.allocated skips it): the frontend's count is the evidence then.
    if (kv && (kv.status === 'fail' || kv.status === 'warn')) return verdict('fail', `KV: ${kv.summary}`, evidence);
    const kvPart = kv?.status === 'pass' ? 'each logged its KV cache size' : `no KV line to judge (${kv?.summary ?? 'kv.allocated not run'})`;
    return verdict('pass', `${f.workers.length} worker${f.workers.length === 1 ? '' : 's'} counted by the frontend; ${kvPart}`, evidence);
  },
};

export default gate;
