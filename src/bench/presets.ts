// The seeds' experiments as data (issue 23). Each preset names its variants as --set overrides of
// one recipe per machine kind: with a GPU the vLLM recipes, without one Dynamo's mocker engine
// (CPU only; its timings are a model, relative only: docs/bench.md). A variant that cannot be
// measured on the engine says so as data (`unmeasurable`), never as a number.

import { EMBEDDED_MODEL } from '../plan/embedded-model.js';

export type Engine = 'vllm' | 'mocker';

export interface PresetVariant {
  name: string;
  /** The recipe per engine: a built-in name. */
  recipe: Record<Engine, string>;
  sets: Record<string, string>;
  /** Overrides on one engine only, over `sets` (a vLLM recipe run on the mocker: engine=mocker). */
  engineSets?: Partial<Record<Engine, Record<string, string>>>;
  /** Why this variant cannot be measured on that engine (its status is then `missing` with this reason). */
  unmeasurable?: Partial<Record<Engine, string>>;
  /**
   * A control: the preset expects this variant to be invalid by `gate` (it shows that the gate
   * catches what it guards). Reported as "control: invalid as expected (reason)", not a failure;
   * invalid by another gate, or measured, it is one.
   */
  control?: { gate: string; why: string };
}

/** What AIPerf sends (src/bench/aiperf-argv.ts). */
// A type, not an interface: it is stored in bench's result, whose loose zod objects take any key.
export type LoadShape = {
  /** Tokens of the synthetic user prompt (AIPerf --isl; with a prefix pool: the varying tail). */
  inputTokens: number;
  /** Tokens asked for per answer (AIPerf --osl). */
  outputTokens: number;
  /** Shared-prefix pool: `count` prefixes of `tokens` tokens, each request picks one (AIPerf --num-prefix-prompts / --prefix-prompt-length). */
  prefixes: { count: number; tokens: number } | null;
};

export interface Preset {
  name: string;
  description: string;
  variants: PresetVariant[];
  concurrency: number[];
  /** Requests per run when --requests is not given. */
  requests: number;
  load: LoadShape;
}

// The seed's routing experiment: 12 prefixes sent 6 times each (loadFor keeps 6 sends per prefix for another --requests), one request at a time
// (FACTS §7: KV routing with events 53-60 of 60 repeats hit, round-robin 35-43, events on the
// router but none published 37-44). The mocker publishes its own KV events unless prefix caching
// is off (dynamo/mocker/args.py --no-enable-prefix-caching, ai-dynamo 1.6.1): that is how its
// "events off" is made; doctor's kv.events then fails, and so does the bench gate of that name.
const ROUTER = { vllm: 'agg-router', mocker: 'mocker' };
const NO_EVENTS = '["--no-enable-prefix-caching"]';
// The mocker's prefill at 1/20 of its modelled speed, its decode at full speed (--speedup-ratio 0.05
// --decode-speedup-ratio 20: decode runs at their product, dynamo/mocker/args.py, ai-dynamo 1.3.1 to
// 1.6.1). At full speed its simulated prefill of these prompts takes a few ms, below the CPU's own
// noise in the frontend and the load generator, so the time a cache hit saves could not be seen in
// TTFT; at 1/10 overall a loaded CI machine still blurred hits into misses (TTFT p50 337 ms with KV
// events against 337 ms at random, 2026-12-05). Slowing prefill alone widens that gap and keeps
// the runs short.
const SLOW_ARGS = ['--speedup-ratio', '0.05', '--decode-speedup-ratio', '20'];
// Eight mocker workers for four concurrent requests. The KV router's cost weighs the blocks a
// worker must prefill against the blocks it has active, so a busy worker holding the prefix loses to
// an idle one without it by the new request's own uncached blocks: a repeat hits only where a
// holder is idle. With as many workers as requests (4 at concurrency 4) the one idle worker is
// about as likely to hold the prefix as the one random routing picks: CI's run of 2026-12-07 at
// 72 requests had KV routing 49.3% against random 49.3% (TTFT mean 520 against 705 ms), and two
// workers had KV routing and round-robin alike (45.1% and 45.3%). With eight, a holder is idle
// most of the time, while round-robin and random find the prefix on the worker they pick less
// often (real 1.6.1 mocker, 72 requests at concurrency 4, 2 repeats: 63.9% against 21.4% and
// 24.5%; with four 52.3% against 43.5% and 44.9%).
const WORKERS = { 'workers.0.replicas': '8' };
const SLOW = { 'workers.0.args': JSON.stringify(SLOW_ARGS), ...WORKERS };
const SLOW_NO_EVENTS = { 'workers.0.args': JSON.stringify([...SLOW_ARGS, '--no-enable-prefix-caching']), ...WORKERS };

export const PRESETS: Record<string, Preset> = {
  routing: {
    name: 'routing',
    description: 'KV-aware routing (events, approximate) against round-robin and random, and a KV router whose workers publish no events',
    variants: [
      { name: 'kv-events', recipe: ROUTER, sets: {}, engineSets: { mocker: SLOW } },
      { name: 'kv-approx', recipe: ROUTER, sets: { 'frontend.kvEvents': 'false' }, engineSets: { mocker: SLOW } },
      { name: 'round-robin', recipe: ROUTER, sets: { 'frontend.routerMode': 'round-robin' }, engineSets: { mocker: SLOW } },
      { name: 'random', recipe: ROUTER, sets: { 'frontend.routerMode': 'random' }, engineSets: { mocker: SLOW } },
      {
        name: 'kv-events-off', recipe: ROUTER, sets: { 'workers.0.args': NO_EVENTS }, engineSets: { mocker: SLOW_NO_EVENTS },
        control: { gate: 'kv.events', why: 'workers that publish no KV events: the kv.events gate must catch it' },
      },
    ],
    concurrency: [1, 4],
    requests: 72,
    // 12 prefixes at the preset's 72 requests; another --requests keeps 6 sends per prefix (prefixesFor).
    load: { inputTokens: 32, outputTokens: 8, prefixes: { count: 12, tokens: 1024 } },
  },
  'agg-vs-disagg': {
    name: 'agg-vs-disagg',
    description: 'aggregated serving against prefill and decode split on the same GPU, at concurrency 1 and 4',
    variants: [
      { name: 'agg', recipe: { vllm: 'agg', mocker: 'mocker' }, sets: {}, engineSets: { mocker: { 'workers.0.replicas': '1' } } },
      // The mocker's own disaggregation mode (--disaggregation-mode prefill|decode): the plan gives it
      // to mocker workers of a prefill/decode recipe (src/plan/build.ts).
      // Its model is the mocker recipe's (the embedded one), so model.same compares like with like.
      { name: 'disagg', recipe: { vllm: 'disagg-same-gpu', mocker: 'disagg-same-gpu' }, sets: {}, engineSets: { mocker: { engine: 'mocker', model: EMBEDDED_MODEL } } },
    ],
    concurrency: [1, 4],
    requests: 32,
    load: { inputTokens: 512, outputTokens: 64, prefixes: null },
  },
  'frontend-overhead': {
    name: 'frontend-overhead',
    description: 'Dynamo\'s frontend and one worker against the engine\'s own OpenAI server',
    variants: [
      { name: 'frontend+worker', recipe: { vllm: 'agg', mocker: 'mocker' }, sets: {}, engineSets: { mocker: { 'workers.0.replicas': '1' } } },
      {
        name: 'engine-alone', recipe: { vllm: 'agg', mocker: 'mocker' }, sets: {},
        unmeasurable: {
          mocker: 'the mocker has no OpenAI server of its own (it serves only behind Dynamo\'s frontend): the frontend\'s overhead cannot be measured on it',
          vllm: 'starting vLLM\'s own OpenAI server (`vllm serve`) through dynamo-dev is not built yet: the engine alone is not measured',
        },
      },
    ],
    concurrency: [1],
    requests: 32,
    load: { inputTokens: 256, outputTokens: 64, prefixes: null },
  },
};

export const PRESET_NAMES = Object.keys(PRESETS);

/** The load of a plain `bench RECIPE...` (no preset). */
export const DEFAULT_LOAD: LoadShape = { inputTokens: 256, outputTokens: 64, prefixes: null };
export const DEFAULT_REQUESTS = 32;
export const DEFAULT_CONCURRENCY = [1];
export const DEFAULT_REPEATS = 3;

/** Sends per shared prefix the routing experiment is designed for: the first send of a prefix misses everywhere. */
export const SENDS_PER_PREFIX = 6;
/** The most prefixes a load asks for (64 x 1,024 tokens: well inside one worker's KV cache on the mocker or a laptop GPU). */
export const MAX_PREFIXES = 64;

/**
 * The load of `requests` requests: a shared-prefix pool keeps SENDS_PER_PREFIX sends per prefix
 * (at least 2 prefixes, at most MAX_PREFIXES), so the hit share a router can reach does not
 * depend on --requests. With 12 prefixes fixed, 36 requests sent each prefix 3 times: a third of
 * the sends were first sends (a miss under any router), and at concurrency 4 KV routing led random
 * by 2.6 points of hit share where 72 requests gave 15 (real 1.6.1 mocker, 2026-12-07).
 */
export function loadFor(load: LoadShape, requests: number): LoadShape {
  if (!load.prefixes) return load;
  const count = Math.min(MAX_PREFIXES, Math.max(2, Math.round(requests / SENDS_PER_PREFIX)));
  return { ...load, prefixes: { ...load.prefixes, count } };
}
