import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../helpers/cli.js';
import { recipeJsonSchema } from '../../../src/recipe/json-schema.js';

// docs/recipe.schema.json is generated from the zod schema. Regenerate after a schema change with
//   UPDATE_SCHEMA=1 npx vitest run test/unit/recipe/schema-json.test.ts
const PATH = join(ROOT, 'docs', 'recipe.schema.json');

describe('docs/recipe.schema.json', () => {
  it('matches the zod schema (stale file = test failure)', () => {
    const fresh = `${JSON.stringify(recipeJsonSchema(), null, 2)}\n`;
    if (process.env.UPDATE_SCHEMA === '1') writeFileSync(PATH, fresh);
    expect(readFileSync(PATH, 'utf8')).toBe(fresh);
  });

  it('describes the fields users write, with defaults and ranges', () => {
    const s = recipeJsonSchema() as any;
    expect(s.required).toEqual(['name', 'workers']);
    expect(s.additionalProperties).toBe(false);
    expect(s.properties.maxModelLen).toMatchObject({ type: 'integer', minimum: 16, default: 4096 });
    expect(s.properties.workers.items.properties.role.enum).toEqual(['agg', 'prefill', 'decode']);
    expect(JSON.stringify(s.properties.workers.items.properties.gpuMemoryUtilization)).toContain('"auto"');
  });
});
