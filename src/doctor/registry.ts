import { UserError } from '../errors.js';
import { usesNixl } from '../plan/nixl.js';
import type { Plan } from '../plan/types.js';
import { CHECK_IDS, type Check } from './types.js';
import gpuDriver from './checks/gpu.driver.js';
import gpuMemory from './checks/gpu.memory.js';
import cudaCompat from './checks/cuda.compat.js';
import cpuMemory from './checks/cpu.memory.js';
import cpuFeatures from './checks/cpu.features.js';
import pythonEnv from './checks/python.env.js';
import procsLeftover from './checks/procs.leftover.js';
import modelAvailable from './checks/model.available.js';
import hfLocks from './checks/hf.locks.js';
import ucxTransports from './checks/ucx.transports.js';
import portsFree from './checks/ports.free.js';
import kvEvents from './checks/kv.events.js';
import kvAllocated from './checks/kv.allocated.js';
import frontendModels from './checks/frontend.models.js';
import logsErrors from './checks/logs.errors.js';

/** Every check in the order CLI.md fixes for output. */
export const ALL_CHECKS: Check[] = [
  gpuDriver, gpuMemory, cudaCompat, cpuMemory, cpuFeatures, pythonEnv, procsLeftover, modelAvailable, hfLocks,
  ucxTransports, portsFree, kvEvents, kvAllocated, frontendModels, logsErrors,
];

/**
 * The checks `up` runs before starting (CLI.md up step 3), all at once: python.env too (an
 * interpreter without dynamo would otherwise die with no known signature), ucx.transports only for
 * plans that move KV over NIXL.
 */
export function preflightIds(plan: Pick<Plan, 'processes' | 'device'>): string[] {
  const ids = plan.device === 'cpu'
    ? ['gpu.driver', 'gpu.memory', 'cuda.compat', 'cpu.memory', 'cpu.features', 'python.env', 'procs.leftover', 'hf.locks', 'ports.free']
    : ['gpu.driver', 'gpu.memory', 'cuda.compat', 'python.env', 'procs.leftover', 'hf.locks', 'ports.free'];
  return usesNixl(plan) ? [...ids, 'ucx.transports'] : ids;
}

function validate(ids: string[], flag: string): void {
  const bad = ids.filter((id) => !(CHECK_IDS as readonly string[]).includes(id));
  if (bad.length > 0) {
    throw new UserError(`${flag}: unknown check id ${bad.map((b) => `"${b}"`).join(', ')}; valid ids: ${CHECK_IDS.join(', ')}`);
  }
}

/** --only / --skip applied, declared order kept. Unknown ids are an input error. */
export function selectChecks(o: { only?: string[]; skip?: string[] } = {}): Check[] {
  if (o.only?.length) validate(o.only, '--only');
  if (o.skip?.length) validate(o.skip, '--skip');
  return ALL_CHECKS.filter((c) => (!o.only?.length || o.only.includes(c.id)) && !o.skip?.includes(c.id));
}
