import type { Plan } from './types.js';

// Which plans move KV between workers over NIXL (and so over UCX): the connector is named in a
// worker's --kv-transfer-config (src/plan/build.ts adds NixlConnector for disaggregated vLLM
// recipes; a recipe's own `args` may add it too). Pure.

const flagValue = (argv: readonly string[], flag: string): string | null => {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === flag) return argv[i + 1] ?? null;
    if (argv[i].startsWith(`${flag}=`)) return argv[i].slice(flag.length + 1);
  }
  return null;
};

export function usesNixl(plan: Pick<Plan, 'processes'>): boolean {
  return plan.processes.some((p) => /Nixl/i.test(flagValue(p.argv, '--kv-transfer-config') ?? ''));
}
