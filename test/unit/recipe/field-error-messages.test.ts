import { describe, expect, it } from 'vitest';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// The one line naming a recipe field and what would be valid, in the cases that read differently:
// several unknown fields at once, and text fields given a list or a boolean.
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';
const TOP = 'name, description, engine, device, model, python, gpu, maxModelLen, enforceEager, discovery, memory, frontend, workers, env, ports, startup';

describe('several unknown fields', () => {
  it('all are named, comma-separated, with the valid list (no guess from the first alone)', () => {
    expect(errorOf(`${minimal}enginee: vllm\ncolour: red\n`)).toBe(`my.yaml: unknown field "enginee", "colour"; valid here: ${TOP} (see docs/recipes.md)`);
  });
});

describe('a text field given something else', () => {
  it('a list where text goes: the type, without the advice to quote it', () => {
    expect(errorOf(`${minimal}description: [a, b]\n`)).toBe('my.yaml: description: must be string (got ["a","b"])');
  });

  it('a boolean where text goes (a recipe named true): quote it', () => {
    expect(errorOf(minimal.replace('name: t', 'name: true'))).toBe('my.yaml: name: must be a string (got true; quote it: "true")');
  });
});
