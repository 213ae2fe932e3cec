import { z } from 'zod';
import { jsonSchemaDoc } from '../json-schema-doc.js';
import type { Plan } from '../plan/types.js';
import { jsonErrorWithoutText } from '../host/net/http-body.js';

export { jsonErrorWithoutText };

// The stored result of one `dynamo-dev bench` (issue 23): <state dir>/bench/<id>/result.json, with
// AIPerf's raw exports beside it. `bench` writes it (bench-run); `bench show/compare/list`, the
// report, the plot and `--json` read it back through this schema. Loose objects: fields a newer
// version adds pass through an older reader. Fields are added, never renamed (CLI.md). The one type
// of the document: bench builds it as BenchResult and the writer validates it against this schema.

/** The document's version: bumped only when a reader of the old shape would misread the new one. */
export const BENCH_SCHEMA_VERSION = 1;

const count = z.number().int().min(0);
const positive = z.number().int().min(1);
/** A measured quantity: finite, never negative (a time, a rate, a share). */
const measure = z.number().finite().min(0);

export const benchIdPattern = /^[\w.-]+$/;
const benchId = z.string().regex(benchIdPattern, 'is not a bench id').refine((s) => s !== '.' && s !== '..', 'is not a bench id');

export const benchMetricsSchema = z.looseObject({
  ttftP50Ms: measure,
  ttftP90Ms: measure,
  itlP50Ms: measure,
  outputTokensPerSec: measure,
  requestsPerSec: measure,
  /** Share of prompt tokens served from the prefix cache (frontend's cached_tokens); null where the release does not report it. */
  cacheHitShare: z.number().finite().min(0).max(1).nullable(),
  /** Requests completed / errored in this run (AIPerf's counts). */
  requests: count,
  errors: count,
  /** Means beside the percentiles; absent in results stored before they were kept. */
  ttftMeanMs: measure.optional(),
  itlMeanMs: measure.optional(),
  /** AIPerf's error texts grouped (its error_summary), largest count first; absent before they were kept. */
  errorTexts: z.array(z.looseObject({ text: z.string(), count: count })).optional(),
});

/** Per completed request (AIPerf's profile_export.jsonl): TTFT, and the prompt tokens read from the prefix cache. */
export const benchSamplesSchema = z.looseObject({
  ttftMs: z.array(measure),
  cachedTokens: z.array(measure).nullable(),
  promptTokens: z.array(measure).nullable(),
});

export const benchRunSchema = z.looseObject({
  concurrency: positive,
  /** 0-based repeat index. */
  repeat: count,
  /** AIPerf's --random-seed for this run (the bench's seed + k, k-th load run); absent before each run had its own. */
  seed: count.optional(),
  /** AIPerf's raw export, relative to bench/<id>/. */
  export: z.string(),
  metrics: benchMetricsSchema,
  samples: benchSamplesSchema.optional(),
});

export const gateStatusSchema = z.enum(['pass', 'fail', 'unknown']);

export const benchGateSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  status: gateStatusSchema,
  summary: z.string(),
  /** What the verdict was judged on (log lines, counts, endpoints): shown, never acted on. */
  evidence: z.record(z.string(), z.unknown()),
});

export const variantStatusSchema = z.enum(['measured', 'invalid', 'failed', 'missing']);

export const benchVariantSchema = z.looseObject({
  name: z.string().min(1),
  recipe: z.string(),
  /** The --set / --vary overrides that make this variant. */
  sets: z.record(z.string(), z.string()),
  model: z.string(),
  tokenizer: z.string(),
  /** `up --dry-run --json`'s plan document for this variant (checked loosely, like run.json's); {} when none was made. */
  plan: z.custom<Plan | Record<string, never>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'is not an object')
    // Published as the loose object it is checked as (the plan's own fields are up's, docs/up.md).
    .meta({ type: 'object', properties: {}, additionalProperties: {} }),
  doctor: z.array(z.looseObject({ id: z.string(), status: z.string(), summary: z.string() })),
  /** measured: gates passed and the load ran; invalid: a gate failed; failed: up/load broke; missing: never run (interrupted). */
  status: variantStatusSchema,
  reason: z.string().nullable(),
  /** A preset's control, expected invalid by `gate`; absent or null for the others. */
  control: z.looseObject({ gate: z.string(), why: z.string() }).nullable().optional(),
  gates: z.array(benchGateSchema),
  runs: z.array(benchRunSchema),
  /** The run id under runs/ (its logs), null when nothing was started; absent in results stored before it was kept. */
  runId: z.string().nullable().optional(),
  /**
   * Where the variant's time went, ms: up (preflight + start to ready), the AIPerf runs, teardown,
   * and `total` from the start of up to the end of teardown. What is left (`total` minus the
   * others) is bench's own: the gates' facts, writing the result (bench/README.md measures it).
   */
  timings: z.looseObject({ upMs: measure, loadMs: measure, teardownMs: measure, gatesMs: measure, totalMs: measure }).optional(),
  /** A disaggregated variant's KV lane, from the NIXL probe of its preflight; absent without NIXL or in results stored before. */
  transport: z.looseObject({
    status: z.string(), lane: z.string().nullable(), tcp: z.boolean(), msPerMb: z.number().nullable(), ucxVersion: z.string().nullable(), summary: z.string(),
  }).nullable().optional(),
});

export const benchMachineSchema = z.looseObject({
  gpu: z.looseObject({ index: count, name: z.string(), totalMiB: measure }).nullable(),
  driver: z.string().nullable(),
  cudaDriver: z.string().nullable(),
  dynamo: z.string().nullable(),
  vllm: z.string().nullable(),
  aiperf: z.string().nullable(),
  python: z.string(),
  /** The interpreter's version ("3.11.7"); absent in results stored before it was kept. */
  pythonVersion: z.string().nullable().optional(),
  /** The engine the variants ran ('mixed': recipes of both); absent in results stored before it was kept. */
  engine: z.enum(['vllm', 'mocker', 'mixed']).optional(),
  /** Where bench found AIPerf (PATH, setup's environment, `python -m aiperf`). */
  aiperfFound: z.string().nullable().optional(),
});

export const benchResultSchema = z.looseObject({
  schemaVersion: z.literal(BENCH_SCHEMA_VERSION),
  id: benchId,
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  argv: z.array(z.string()),
  preset: z.string().nullable(),
  seed: count,
  requests: positive,
  concurrency: z.array(positive).min(1),
  repeats: positive,
  interrupted: z.boolean(),
  /** How each load run starts from a cold prefix cache ('fresh-prefixes': its own prompts); absent: results stored before, where later runs met a warm cache. */
  isolation: z.enum(['fresh-prefixes']).optional(),
  machine: benchMachineSchema,
  /** The synthetic load's shape (prompt and answer tokens, the shared-prefix pool); absent in results stored before it was kept. */
  load: z.looseObject({
    inputTokens: positive,
    outputTokens: positive,
    prefixes: z.looseObject({ count: positive, tokens: positive }).nullable(),
  }).optional(),
  variants: z.array(benchVariantSchema),
});

export type BenchMetrics = z.infer<typeof benchMetricsSchema>;
export type BenchSamples = z.infer<typeof benchSamplesSchema>;
export type BenchRun = z.infer<typeof benchRunSchema>;
export type BenchGate = z.infer<typeof benchGateSchema>;
export type GateStatus = z.infer<typeof gateStatusSchema>;
export type VariantStatus = z.infer<typeof variantStatusSchema>;
export type BenchVariant = z.infer<typeof benchVariantSchema>;
export type BenchMachine = z.infer<typeof benchMachineSchema>;
export type BenchResult = z.infer<typeof benchResultSchema>;

/**
 * Pure: the result in `text` (the result.json of bench/<dirId>/), or why it cannot be read, in a
 * phrase naming the field. Its id must be its folder's (`dirId`, when given).
 */
/** A result is a few levels deep; thousands of levels would overflow the stack of whatever walks it (the schema, --json). */
const MAX_NESTING = 64;

/** Pure: the deepest nesting of [ and { outside strings (stops counting once past the limit). */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped char
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) max = depth;
      if (max > MAX_NESTING * 2) return max;
    } else if (c === 93 || c === 125) depth--;
  }
  return max;
}

export function parseBenchResult(text: string, dirId?: string): { ok: true; result: BenchResult } | { ok: false; reason: string } {
  // A byte-order mark (an editor's, Windows tools') is not the document's.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const depth = nestingDepth(body);
  if (depth > MAX_NESTING) return { ok: false, reason: `nested deeper than ${MAX_NESTING} levels; a bench result never is` };
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (err) {
    return { ok: false, reason: `not JSON (${jsonErrorWithoutText((err as Error).message)})` };
  }
  const version = (raw as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (raw !== null && typeof raw === 'object' && version !== BENCH_SCHEMA_VERSION) {
    const v = version === undefined ? 'no schemaVersion' : `schemaVersion ${JSON.stringify(version)}`;
    return { ok: false, reason: `${v}; this dynamo-dev reads schemaVersion ${BENCH_SCHEMA_VERSION}` };
  }
  const r = benchResultSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    return { ok: false, reason: `${i.path.map(String).join('.') || 'the document'}: ${i.message}` };
  }
  if (dirId !== undefined && r.data.id !== dirId) return { ok: false, reason: `its id ${JSON.stringify(r.data.id)} is not its folder's` };
  return { ok: true, result: r.data };
}

/** The bench result format as JSON Schema (docs/bench.schema.json): what `bench --json` and result.json hold. */
export const benchJsonSchema = (): Record<string, unknown> =>
  jsonSchemaDoc(benchResultSchema, 'output', 'dynamo-dev bench result', 'The stored result of `dynamo-dev bench` (<state dir>/bench/<id>/result.json) and its --json output (docs/bench.md).');
