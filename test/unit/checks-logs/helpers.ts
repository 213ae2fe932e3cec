import { join } from 'node:path';
import type { LogSet, RunView } from '../../../src/doctor/types.js';
import { scanPaths } from '../../../src/host/logs/log-scan.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { Plan } from '../../../src/plan/types.js';
import type { RunRecord } from '../../../src/run/types.js';
import type { Recipe } from '../../../src/recipe/schema.js';
import { recipeFrom } from '../../helpers/facts.js';
import { SAMPLES } from '../../helpers/cli.js';

export const LOGS = join(SAMPLES, 'logs');
export const sample = (name: string) => join(LOGS, name);

/** Two aggregated workers behind the KV router with events (the agg-router recipe). */
export const routerRecipe = (kvEvents = true) =>
  recipeFrom({ frontend: { routerMode: 'kv', kvEvents } as never, workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 } as never] });
export const routerPlan = (kvEvents = true): Plan => buildPlan({ recipe: routerRecipe(kvEvents), runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });

/** A run of `plan` whose processes log to the given files (process name -> log path). */
export function runOf(plan: Plan, logs: Record<string, string>, o: { live?: boolean; argv?: Record<string, string[]>; states?: Record<string, string>; recipe?: Recipe } = {}): RunView {
  const record: RunRecord = {
    id: '20261130-101500-agg-router',
    recipe: plan.recipe,
    ...(o.recipe ? { recipeSpec: o.recipe } : {}),
    model: plan.model,
    createdAt: '2026-11-30T10:15:00.000Z',
    updatedAt: '2026-11-30T10:16:00.000Z',
    supervisor: { pid: 999999, startTicks: null, detached: false },
    state: 'ready',
    frontendUrl: plan.frontendUrl,
    plan,
    processes: plan.processes.map((p) => ({
      name: p.name, role: p.role, pid: null, pgid: null, startTicks: null, startedAt: null,
      argv: o.argv?.[p.name] ?? p.argv, env: p.env, ports: p.ports, gpuMemoryUtilization: p.gpuMemoryUtilization,
      state: (o.states?.[p.name] ?? 'ready') as never, kvTokens: null, exitCode: null, signal: null,
      log: logs[p.name] ?? `/nonexistent/${p.name}.log`, descendants: [],
    })),
  };
  return { record, status: 'ready', live: o.live ?? false, pids: [], lost: [], logsDir: LOGS };
}

/** The LogSet facts.ts builds for a run: each process's log, scanned with missing ones skipped. */
export async function runLogs(run: RunView): Promise<LogSet> {
  const files = run.record.processes.map((p) => ({ path: p.log, process: p.name, role: p.role }));
  const scan = await scanPaths(files.map((f) => f.path), { missingOk: true });
  return { source: 'run', label: `run ${run.record.id}`, files, scan };
}

/** The LogSet facts.ts builds for --logs PATH... */
export async function pathLogs(paths: string[]): Promise<LogSet> {
  const scan = await scanPaths(paths);
  return { source: 'paths', label: paths.join(' '), files: Object.keys(scan.kvTokens).map((path) => ({ path, process: null, role: null })), scan };
}
