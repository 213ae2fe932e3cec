import { UserError } from '../errors.js';
import type { Recipe } from '../recipe/schema.js';
import type { ReleaseFacts } from './dynamo-releases.js';

// The KV router's flags that Dynamo 1.7 removed (pure): deprecated in 1.6 for removal in 1.7, with
// their environment variables, their settings moved into the YAML of --router-policy-config.
// Read from ai-dynamo/dynamo components/src/dynamo/common/configuration/groups/kv_router_args.py
// (commit 021d6169, the 1.6 line: each declared `Deprecated(<replacement>, remove_in="v1.7")`,
// under "TODO(v1.7): Remove these flags/env aliases"; ai-dynamo/dynamo#15183). The v1.7.0 file
// itself was not read (dynamo-releases.ts, routerPolicyFileOnly). dynamo-dev's own plans pass none
// of them; a recipe that does would stop the 1.7 frontend at its argument parser (a flag) or be
// ignored without a word (a variable), so the plan refuses it, naming where the setting lives now.

export interface RemovedRouterFlag {
  flag: string;
  /** Other spellings the 1.6 parser accepted for it. */
  aliases: readonly string[];
  env: readonly string[];
  /** Where its setting lives in 1.7, as the 1.6 deprecation message says. */
  replacement: string;
}

const param = (name: string): string => `${name} in the default policy's parameters (worker_selection.instances[].parameters) of the YAML given with --router-policy-config`;

export const REMOVED_ROUTER_FLAGS: readonly RemovedRouterFlag[] = [
  { flag: '--router-kv-overlap-score-credit', aliases: [], env: ['DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT'], replacement: param('overlap_score_credit') },
  { flag: '--router-kv-overlap-score-credit-decay', aliases: [], env: ['DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY'], replacement: param('overlap_score_credit_decay') },
  // The 1.6 parser maps the old weight onto prefill_load_scale (its Deprecated(...) names that).
  { flag: '--router-kv-overlap-score-weight', aliases: ['--kv-overlap-score-weight'], env: ['DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT', 'DYN_OVERLAP_SCORE_WEIGHT'], replacement: param('prefill_load_scale') },
  { flag: '--router-prefill-load-scale', aliases: [], env: ['DYN_ROUTER_PREFILL_LOAD_SCALE'], replacement: param('prefill_load_scale') },
  { flag: '--router-decode-active-request-weight', aliases: [], env: ['DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT'], replacement: param('decode_active_request_weight') },
  { flag: '--router-temperature', aliases: [], env: ['DYN_ROUTER_TEMPERATURE'], replacement: param('router_temperature') },
  { flag: '--shared-cache-multiplier', aliases: [], env: ['DYN_SHARED_CACHE_MULTIPLIER'], replacement: param('shared_cache_multiplier') },
  { flag: '--load-aware', aliases: ['--no-load-aware'], env: ['DYN_ROUTER_LOAD_AWARE'], replacement: 'the load-only policy and the router tracking settings of --router-policy-config' },
  { flag: '--router-queue-threshold', aliases: [], env: ['DYN_ROUTER_QUEUE_THRESHOLD'], replacement: 'policy_classes[].prefill_busy_threshold_frac in --router-policy-config' },
  { flag: '--router-queue-policy', aliases: [], env: ['DYN_ROUTER_QUEUE_POLICY'], replacement: 'policy_classes[].queue_policy in --router-policy-config' },
  { flag: '--router-prefill-policy', aliases: [], env: ['DYN_ROUTER_PREFILL_POLICY'], replacement: 'worker_selection.prefill in --router-policy-config' },
  { flag: '--router-decode-policy', aliases: [], env: ['DYN_ROUTER_DECODE_POLICY'], replacement: 'worker_selection.decode in --router-policy-config' },
];

/** The removed flag an argument names (`--router-temperature`, `--router-temperature=0.5`); null when none. */
export function removedFlagOf(arg: string): RemovedRouterFlag | null {
  const name = arg.split('=')[0];
  return REMOVED_ROUTER_FLAGS.find((f) => f.flag === name || f.aliases.includes(name)) ?? null;
}

/**
 * Refuses a recipe that gives the frontend a router flag or variable its release no longer has
 * (bad input: one line naming the field, the release and where the setting lives now).
 */
export function refuseRemovedRouterSettings(recipe: Recipe, facts: Pick<ReleaseFacts, 'since' | 'routerPolicyFileOnly'>, version: string): void {
  if (!facts.routerPolicyFileOnly) return;
  const said = (f: RemovedRouterFlag, what: string, field: string): UserError => new UserError(
    `${field}: ${what} was removed in Dynamo ${facts.since} (deprecated in 1.6${version === facts.since ? '' : `; this plan is for ${version}`}): its setting is ${f.replacement}`,
    `give the frontend --router-policy-config FILE holding that setting (frontend.args), or use a 1.6 release, which still takes ${f.flag}`,
  );
  for (const a of recipe.frontend.args) {
    const f = removedFlagOf(a);
    if (f) throw said(f, a.split('=')[0], 'frontend.args');
  }
  for (const [field, env] of [['frontend.env', recipe.frontend.env], ['env', recipe.env]] as const) {
    for (const name of Object.keys(env)) {
      const f = REMOVED_ROUTER_FLAGS.find((r) => r.env.includes(name));
      if (f) throw said(f, `${name} (the variable of ${f.flag})`, `${field}.${name}`);
    }
  }
}
