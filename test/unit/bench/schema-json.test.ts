import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { FIXTURES, ROOT } from '../../helpers/cli.js';
import { benchJsonSchema } from '../../../src/bench/result.js';

// docs/bench.schema.json is generated from the zod schema. Regenerate after a schema change with
//   UPDATE_SCHEMA=1 npx vitest run test/unit/bench/schema-json.test.ts
const PATH = join(ROOT, 'docs', 'bench.schema.json');

describe('docs/bench.schema.json', () => {
  it('matches the zod schema (stale file = test failure)', () => {
    const fresh = `${JSON.stringify(benchJsonSchema(), null, 2)}\n`;
    if (process.env.UPDATE_SCHEMA === '1') writeFileSync(PATH, fresh);
    expect(readFileSync(PATH, 'utf8')).toBe(fresh);
  });

  it('a stored result validates against the published schema, and a broken one does not', () => {
    // The published file itself, read back as JSON Schema (not the zod schema it came from).
    const published = z.fromJSONSchema(JSON.parse(readFileSync(PATH, 'utf8')));
    const dir = join(FIXTURES, 'bench', 'state', 'bench');
    for (const id of readdirSync(dir)) {
      const doc = JSON.parse(readFileSync(join(dir, id, 'result.json'), 'utf8'));
      expect(published.safeParse(doc).success, id).toBe(true);
      expect(published.safeParse({ ...doc, variants: [{ ...doc.variants[0], status: 'fine' }] }).success).toBe(false);
      expect(published.safeParse({ ...doc, concurrency: [] }).success).toBe(false);
    }
  });

  it('names the document and requires what show and compare read', () => {
    const s = benchJsonSchema() as any;
    expect(s.title).toBe('dynamo-dev bench result');
    expect(s.required).toEqual(expect.arrayContaining(['schemaVersion', 'id', 'machine', 'variants', 'concurrency', 'repeats']));
    expect(s.properties.variants.items.properties.status.enum).toEqual(['measured', 'invalid', 'failed', 'missing']);
    expect(s.properties.variants.items.properties.runs.items.properties.metrics.properties.cacheHitShare.anyOf).toBeDefined();
  });
});
