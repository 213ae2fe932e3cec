import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, tempHomes } from '../../helpers/cli.js';
import { parseRecipe } from '../../../src/recipe/load.js';
import { startVariant } from '../../../src/run/bench-start.js';
import type { PreparedVariant } from '../../../src/run/bench.js';

// run/bench-start.ts startVariant (moved out of commands/ by issue 30): a bench variant starts as
// `up --detach` would, and what stops it before anything runs is the variant's reason with up's
// exit code (2 for bad input), never a thrown error that ends the whole bench.

const home = tempHomes('dd-bench-start-');
const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python'), ...extra });

function variant(yaml: string, sets: string[] = []): PreparedVariant {
  return { name: 'v1', recipe: 'v.yaml', sets: {}, unmeasurable: null, recipeObj: parseRecipe(yaml, 'v.yaml', sets), tokenizer: 'gpt2' };
}

describe('startVariant', () => {
  it('a plan that cannot run (its frontend on a port fetch refuses): exit 2, the plan\'s own line as the reason, no run folder', async () => {
    const { stateDir } = home();
    const warned: string[] = [];
    const s = await startVariant(variant('name: v\nengine: mocker\nworkers:\n  - role: agg\n', ['frontend.httpPort=6000']), {
      stateDir, env: env(), python: 'python3', sets: [], preflight: false, warn: (t) => void warned.push(t),
    });
    expect(s).toMatchObject({ code: 2, runId: null, plan: null, preflight: [] });
    expect(s.failed).toMatch(/^v\.yaml: frontend\.httpPort: port 6000 is one fetch refuses to connect to .* e\.g\. 6001$/);
    expect(warned).toEqual([]);
    expect(existsSync(join(stateDir, 'runs'))).toBe(false);
  });

  it('up\'s warnings come first (VLLM_LOGGING_LEVEL hides the KV line), then the model check refuses a model folder that is not there: exit 2', async () => {
    const { stateDir, dir } = home();
    const missing = join(dir, 'no-such-model');
    const warned: string[] = [];
    const s = await startVariant(variant(`name: v\nmodel: ${missing}\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.3\n`), {
      stateDir, env: env({ VLLM_LOGGING_LEVEL: 'ERROR' }), python: 'python3', sets: [], preflight: true, warn: (t) => void warned.push(t),
    });
    expect(warned).toEqual([expect.stringMatching(/^warning: VLLM_LOGGING_LEVEL=ERROR hides vLLM's INFO line .* that agg-0 must log/)]);
    expect(s.code).toBe(2);
    expect(s.failed).toContain(missing);
    expect(existsSync(join(stateDir, 'runs'))).toBe(false);
  });
});
