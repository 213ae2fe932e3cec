import type { Plan, PlannedProcess } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import { logPath } from './paths.js';
import type { ProcessRecord, RunRecord } from './types.js';
import { RESTART_CAPABILITY } from './restart-request.js';
import type { SupervisorDeps } from './supervisor-deps.js';
import type { SupervisorOptions } from './supervisor-types.js';

// The run.json record of a run about to start: written before the first spawn, so a supervisor
// killed at any moment leaves a record status and teardown can read.

/** Pure: a planned process before it starts (waiting, no pid). */
export function newProcessRecord(spec: PlannedProcess, stateDir: string, runId: string): ProcessRecord {
  return {
    name: spec.name, role: spec.role, pid: null, pgid: null, startTicks: null, startedAt: null,
    argv: spec.argv, env: spec.env, ports: spec.ports, gpuMemoryUtilization: spec.gpuMemoryUtilization,
    state: 'waiting', kvTokens: null, exitCode: null, signal: null,
    log: logPath(stateDir, runId, spec.name), descendants: [],
  };
}

/** Pure: the run record around its process records (the same objects: the supervisor updates them in place). */
export function newRunRecord(o: {
  runId: string; name?: string; plan: Plan; recipe?: Recipe; processes: ProcessRecord[];
  supervisor: RunRecord['supervisor']; now: Date; bootId?: string | null;
}): RunRecord {
  const at = o.now.toISOString();
  return {
    id: o.runId, ...(o.name ? { name: o.name } : {}), recipe: o.plan.recipe, model: o.plan.model, createdAt: at, updatedAt: at,
    supervisor: o.supervisor, bootId: o.bootId ?? null, state: 'starting', frontendUrl: o.plan.frontendUrl, plan: o.plan, processes: o.processes,
    ...(o.recipe ? { recipeSpec: o.recipe } : {}),
  };
}

/** The record of a run as its supervisor starts it: who supervises (to signal it, and nothing else), its policy. */
export function supervisedRecord(
  o: SupervisorOptions, self: SupervisorDeps['self'], processes: ProcessRecord[],
): RunRecord {
  const rec = newRunRecord({
    runId: o.runId, name: o.name, plan: o.plan, recipe: o.recipe, processes, now: new Date(),
    supervisor: { pid: self.pid, startTicks: self.startTicks, detached: o.detach, requests: o.handleSignals !== false ? [RESTART_CAPABILITY] : [],
      ...(typeof o.markedSinceTicks === 'number' ? { markedSince: o.markedSinceTicks } : {}),
      ...(self.pidNamespace ? { pidNamespace: self.pidNamespace } : {}) },
    bootId: self.bootId,
  });
  if (o.restart) rec.restartPolicy = o.restart;
  return rec;
}
