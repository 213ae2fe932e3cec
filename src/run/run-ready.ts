import { kvDiagnosticsGap, kvDiagnosticsHint } from '../plan/kv-diagnostics.js';
import { curlLine, type ReadyWorker, type UpEvent } from './events.js';
import type { RunCore } from './run-core.js';

// What the run says at ready: the `ready` event (the endpoint, a curl line, each worker's KV cache
// and log), after the one hint a release that does not log kv_event_publisher_disabled needs.

export function readyEvents(run: RunCore, ms: number): UpEvent[] {
  const { plan } = run.o;
  const workers: ReadyWorker[] = run.procs.filter((p) => p.spec.role !== 'frontend').map((p) => ({
    name: p.name, role: p.spec.role, kvTokens: p.rec.kvTokens, gpuMemoryUtilization: p.spec.gpuMemoryUtilization,
    log: p.rec.log, health: p.spec.ready.http ?? null,
  }));
  const out: UpEvent[] = [];
  // The live warning (kv_event_publisher_disabled) cannot come from a release that does not log
  // it: say so once, rather than let its absence read as "events arrive".
  const gap = kvDiagnosticsGap(plan);
  const fe = run.frontend();
  if (gap && fe) out.push({ event: 'hint', process: fe.name, code: 'kv_diagnostics_unlogged', text: kvDiagnosticsHint(gap) });
  out.push({
    event: 'ready', runId: run.o.runId, url: plan.frontendUrl, model: plan.model, curl: curlLine(plan.frontendUrl, plan.model), workers,
    logs: Object.fromEntries(run.procs.map((p) => [p.name, p.rec.log])), ms, detached: run.o.detach,
  });
  return out;
}
