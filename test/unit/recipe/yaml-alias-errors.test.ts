import { describe, expect, it } from 'vitest';
import { parseRecipe } from '../../../src/recipe/load.js';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// YAML aliases (*name) that cannot be expanded: the message says what is wrong with them, and only
// a real "billion laughs" file is called one. Each is one line naming the file, never a crash.
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';

describe('an alias yaml cannot expand', () => {
  it('an alias to no anchor (a typo of its name) says so and names it, not "expand too far"', () => {
    expect(errorOf(`model: &qwen Qwen/Qwen3-0.6B\n${minimal}frontend: {args: [--served-model-name, *qwne]}\n`)).toBe(
      'my.yaml: invalid YAML: Unresolved alias (the anchor must be set before the alias): qwne',
    );
  });

  it('a YAML 1.1 merge (<<) of something that is not a map says so, not "expand too far"', () => {
    expect(errorOf(`%YAML 1.1\n---\n${minimal}frontend: {<<: 8000}\n`)).toBe('my.yaml: invalid YAML: Merge sources must be maps or map aliases');
  });

  it('control characters in the alias name become one space per run: one printable line', () => {
    expect(errorOf(`${minimal}model: *q\u0001\u0002r\n`)).toBe('my.yaml: invalid YAML: Unresolved alias (the anchor must be set before the alias): q r');
  });
});

describe('a value that contains itself', () => {
  it('a list holding its own alias names the field and where it points, instead of crashing', () => {
    expect(errorOf('name: t\nworkers: &w [*w]\n')).toBe(
      'my.yaml: workers.0 refers back to workers (an alias inside its own anchor); a recipe cannot contain itself',
    );
    expect(errorOf(`${minimal}env: &e {A: *e}\n`)).toBe('my.yaml: env.A refers back to env (an alias inside its own anchor); a recipe cannot contain itself');
  });

  it('the whole file held by one of its own fields', () => {
    expect(errorOf(`--- &all\n${minimal}self: *all\n`)).toBe(
      'my.yaml: self refers back to the whole file (an alias inside its own anchor); a recipe cannot contain itself',
    );
  });

  it('one anchor used in two places is no loop', () => {
    const r = parseRecipe(`${minimal}env: &e {HF_HUB_OFFLINE: "1"}\nfrontend: {env: *e}\n`, 'my.yaml');
    expect(r.env).toEqual({ HF_HUB_OFFLINE: '1' });
    expect(r.frontend.env).toEqual({ HF_HUB_OFFLINE: '1' });
  });
});
