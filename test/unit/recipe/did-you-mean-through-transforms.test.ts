import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { fieldsAt, nearest } from '../../../src/recipe/suggest.js';

// "Did you mean" reads the field names of the object a path points to. A section that normalises
// what it parsed (.transform, a zod pipe from the object to the function) still holds the same
// fields: a typo in it must still get its suggestion, not "valid here: " with nothing after it.
const section = z.strictObject({ httpPort: z.number(), routerMode: z.string() });
const schema = z.strictObject({
  frontend: section.transform((f) => f),
  ports: section.transform((p) => p).default({ httpPort: 1, routerMode: 'kv' }),
  workers: z.array(section.transform((w) => w)),
});

describe('did you mean inside a section that transforms its input', () => {
  it('lists the fields of a transformed section, with a default, and in a list', () => {
    expect(fieldsAt(schema, ['frontend'])).toEqual(['httpPort', 'routerMode']);
    expect(fieldsAt(schema, ['ports'])).toEqual(['httpPort', 'routerMode']);
    expect(fieldsAt(schema, ['workers', 0])).toEqual(['httpPort', 'routerMode']);
    expect(nearest('routerMod', fieldsAt(schema, ['frontend']))).toBe('routerMode');
  });

  it('a transformed whole schema still gives its top-level fields', () => {
    expect(fieldsAt(schema.transform((r) => r), [])).toEqual(['frontend', 'ports', 'workers']);
  });
});
