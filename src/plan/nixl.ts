import { flagValue } from './argv.js';
import type { Plan, PlannedProcess } from './types.js';

// Which plans move KV between workers over NIXL (and so over UCX): the connector is named in a
// worker's --kv-transfer-config (src/plan/build.ts adds NixlConnector for disaggregated vLLM
// recipes; a recipe's own `args` may add it too). Pure.


export function usesNixl(plan: Pick<Plan, 'processes'>): boolean {
  // Stryker disable next-line StringLiteral: the fallback for no flag holds no "Nixl" either way
  return plan.processes.some((p) => /Nixl/i.test(flagValue(p.argv, '--kv-transfer-config') ?? ''));
}

/** The first process that moves KV over NIXL: its environment is the one the NIXL probe gets. */
export function nixlWorker(plan: Pick<Plan, 'processes'>): PlannedProcess | null {
  // Stryker disable next-line StringLiteral: the fallback for no flag holds no "Nixl" either way
  return plan.processes.find((p) => /Nixl/i.test(flagValue(p.argv, '--kv-transfer-config') ?? '')) ?? null;
}
