import { z } from 'zod';

// The recipe format (DESIGN.md "Recipes"). Strict objects: an unknown field is an input error,
// not silently ignored (a typo like `gpuMemoryUtilisation` must never run with the default).

const envMap = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String));
const port = z.number().int().min(1).max(65535);

export const fraction = z.union([
  z.number().gt(0, 'must be a fraction in (0, 1] or "auto"').lte(1, 'must be a fraction in (0, 1] or "auto"'),
  z.literal('auto'),
]);

export const workerSchema = z.strictObject({
  role: z.enum(['agg', 'prefill', 'decode']),
  replicas: z.number().int().min(1).max(16).default(1),
  gpuMemoryUtilization: fraction.default('auto'),
  args: z.array(z.string()).default([]),
  env: envMap.default({}),
});

export const frontendSchema = z.strictObject({
  httpPort: port.default(8000),
  routerMode: z.string().min(1).default('round-robin'),
  kvEvents: z.boolean().default(true),
  args: z.array(z.string()).default([]),
  env: envMap.default({}),
});

export const recipeSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().default(''),
  engine: z.enum(['vllm', 'mocker']).default('vllm'),
  model: z.string().min(1).default('Qwen/Qwen3-0.6B'),
  python: z.string().min(1).default('python3'),
  gpu: z.number().int().min(0).default(0),
  maxModelLen: z.number().int().min(16).default(4096),
  enforceEager: z.boolean().default(true),
  discovery: z.enum(['file', 'etcd', 'mem']).default('file'),
  memory: z
    .strictObject({ limit: z.number().gt(0).lte(1).default(0.9) })
    .default({ limit: 0.9 }),
  frontend: frontendSchema.default({ httpPort: 8000, routerMode: 'round-robin', kvEvents: true, args: [], env: {} }),
  workers: z.array(workerSchema).min(1, 'needs at least one worker'),
  env: envMap.default({ PYTHONHASHSEED: '0' }),
  ports: z
    .strictObject({
      system: port.default(8081),
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
