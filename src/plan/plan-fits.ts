import { UserError } from '../errors.js';
import { highestFraction, workerEntryOf } from './fix-hints.js';
import { kvTokensFor, overheadMiB } from './kv-math.js';
import type { Recipe } from '../recipe/schema.js';
import type { Plan } from './types.js';
import { fetchRefuses } from './fetch-bad-ports.js';

// What makes a built plan impossible, said before anything starts (exit 2 with the fix): ports past
// 65535, shared by two processes or refused by fetch, a worker whose KV cache cannot hold one
// request of maxModelLen.

/** What the fit checks read of buildPlan's input. */
export interface FitInput {
  recipe: Recipe;
  model?: { bytesPerToken: number; weightsMiB: number | null } | null;
}

/** A worker's memory beside weights and KV: eager's (no CUDA graphs) when --enforce-eager is in its argv, from the recipe or its own args. */
export const workerOverheadMiB = (argv: readonly string[]): number => overheadMiB(argv.includes('--enforce-eager'));

/** Ranges count up from their first port, one per worker: the last one must still be a port (<= 65535). */
export function checkPortRange(plan: Plan, recipe: Recipe): void {
  const field: Record<string, [string, number]> = {
    // Stryker disable next-line StringLiteral: never shown: system ports past 32767 are refused before this check (MAX_SYSTEM_PORT), so no system port reaches 65536
    system: ['ports.system', recipe.ports.system],
    kvEvents: ['ports.kvEvents', recipe.ports.kvEvents],
    nixlSideChannel: ['ports.nixlSideChannel', recipe.ports.nixlSideChannel],
  };
  for (const p of plan.processes) {
    for (const [k, port] of Object.entries(p.ports)) {
      if (port <= 65535) continue;
      // Stryker disable next-line ArrayDeclaration: only the frontend's http port is not in the table, and the schema keeps it <= 65535, so it never gets here
      const [name, first] = field[k] ?? [k, port];
      const used = plan.processes.filter((q) => q.ports[k] !== undefined).length;
      throw new UserError(
        `${name}: ${used} workers count up from ${first} to ${port} (${p.name}), past the last port 65535; set ${name} to at most ${65535 - used + 1}`,
      );
    }
  }
}

/**
 * The ports readiness asks over HTTP (the frontend's, each worker's system port) must be ones fetch
 * connects to (fetch-bad-ports.ts): else the run could never be seen ready. The fix moves the whole
 * range (workers count up from ports.system) to the nearest first port above with none refused.
 */
export function checkPortsFetchable(plan: Plan, recipe: Recipe): void {
  for (const k of ['http', 'system'] as const) {
    const [name, first] = k === 'http' ? ['frontend.httpPort', recipe.frontend.httpPort] : ['ports.system', recipe.ports.system];
    const offsets = plan.processes.flatMap((p) => (p.ports[k] === undefined ? [] : [p.ports[k] - first]));
    const bad = plan.processes.find((p) => p.ports[k] !== undefined && fetchRefuses(p.ports[k]));
    if (!bad) continue;
    const port = bad.ports[k];
    let fix = first + 1;
    while (offsets.some((o) => fetchRefuses(fix + o))) fix++;
    const whose = port === first ? '' : ` (${bad.name}'s: the workers count up from ${first})`;
    throw new UserError(
      `${name}: port ${port}${whose} is one fetch refuses to connect to (the WHATWG "bad ports", refused by Node and browsers alike), so dynamo-dev could never see ${bad.name} ready; set ${name} to another, e.g. ${fix}`,
    );
  }
}

export function checkPortsDistinct(plan: Plan): void {
  const seen = new Map<number, string>();
  for (const p of plan.processes) {
    for (const [k, port] of Object.entries(p.ports)) {
      const who = `${p.name}.${k}`;
      const other = seen.get(port);
      if (other) throw new UserError(`ports: ${who} and ${other} would both use port ${port}; move ports.* or frontend.httpPort apart`);
      seen.set(port, who);
    }
  }
}

/** A worker whose KV cache cannot hold one request of max length is a plan that cannot fit. */
export function checkKvFits(plan: Plan, input: FitInput): void {
  for (const p of plan.processes) {
    if (p.kvTokensEstimate === null || p.kvTokensEstimate >= plan.maxModelLen) continue;
    const total = plan.gpu.totalMiB ?? 0;
    const f = p.gpuMemoryUtilization ?? 0;
    const weights = Math.round(input.model?.weightsMiB ?? 0);
    const overhead = workerOverheadMiB(p.argv);
    const kvMiB = Math.max(0, Math.round(total * f - weights - overhead));
    // A fix that works for this recipe: the fraction that would hold maxModelLen (when the limit
    // allows it), else a maxModelLen this fraction holds.
    const entry = workerEntryOf(input.recipe, p.name);
    const mostValue = (entry === null ? null : highestFraction(input.recipe, entry)) ?? f;
    let need: number | null = null;
    // Whole hundredths above f (0.385 -> 0.39) up to the most it may get; the 1e-9 keeps 0.29 * 100 = 28.999... at 29.
    // Stryker disable next-line ArithmeticOperator: KV tokens grow with the fraction and the worker's own fraction gives its estimate, < maxModelLen (same overhead as the estimate), so starting lower finds the same first fraction
    const from = Math.floor(f * 100 + 1e-9) + 1;
    const to = Math.floor(mostValue * 100 + 1e-9);
    for (let g = from; g <= to && need === null && input.model; g++) {
      const tokens = kvTokensFor({ gpuTotalMiB: total, fraction: g / 100, weightsMiB: input.model.weightsMiB ?? 0, overheadMiB: overhead, bytesPerToken: input.model.bytesPerToken });
      if (tokens >= plan.maxModelLen) need = g / 100;
    }
    // Stryker disable next-line ConditionalExpression: need stays null without an entry (mostValue is then f and the loop runs no step)
    const raise = entry !== null && need !== null ? `--set workers.${entry}.gpuMemoryUtilization=${need}` : null;
    const shorter = p.kvTokensEstimate >= 256 ? `--set maxModelLen=${Math.floor(p.kvTokensEstimate / 256) * 256}` : null;
    throw new UserError(
      `workers: ${p.name} at gpuMemoryUtilization ${f} gets ~${Math.round(total * f)} MiB of ${total} MiB; after weights ` +
        `(~${weights} MiB) and overhead (~${overhead} MiB) that leaves ~${kvMiB} MiB = ~${p.kvTokensEstimate} KV tokens ` +
        `at ${input.model?.bytesPerToken.toLocaleString('en-US')} bytes/token, fewer than maxModelLen ${plan.maxModelLen}`,
      [raise ? `raise its fraction (${raise})` : null, shorter ? `lower maxModelLen (${shorter})` : null].filter(Boolean).join(' or ')
        || 'the GPU is too small for this model at this maxModelLen: use a smaller model or a shorter maxModelLen',
    );
  }
}

/** A CPU worker whose whole GiB of KV cannot hold one request of maxModelLen: the plan cannot fit. */
export function checkCpuKvFits(plan: Plan, input: FitInput): void {
  for (const p of plan.processes) {
    if (p.kvTokensEstimate === null || p.kvTokensEstimate === undefined || p.kvTokensEstimate >= plan.maxModelLen) continue;
    throw new UserError(
      `workers: ${p.name} gets ${p.kvCacheGiB} GiB of KV cache on the CPU (VLLM_CPU_KVCACHE_SPACE) = ~${p.kvTokensEstimate.toLocaleString('en-US')} tokens ` +
        `at ${input.model?.bytesPerToken.toLocaleString('en-US')} bytes/token, fewer than maxModelLen ${plan.maxModelLen}`,
      `raise its fraction of host RAM (--set workers.N.gpuMemoryUtilization=...) or lower maxModelLen (--set maxModelLen=${Math.max(16, Math.floor(p.kvTokensEstimate / 128) * 128)})`,
    );
  }
}

