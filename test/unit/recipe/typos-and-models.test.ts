import { describe, expect, it } from 'vitest';
import { parseRecipe } from '../../../src/recipe/load.js';
import { modelProblem, recipeSchema } from '../../../src/recipe/schema.js';
import { editDistance, fieldsAt, nearest } from '../../../src/recipe/suggest.js';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// "Did you mean" at its limits, and which model names a recipe accepts.
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';

describe('edit distance', () => {
  it('counts inserts, deletes, substitutions and swaps of neighbours, whatever the case', () => {
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('Workers', 'workers')).toBe(0);
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('abcd', 'acbd')).toBe(1);
    expect(editDistance('abc', 'ca')).toBe(3);
    expect(editDistance('maxModelLen', 'maxmodellength')).toBe(3);
  });
});

describe('did you mean', () => {
  it('a typo of up to a third of the letters (at least 2) is suggested; one more is not', () => {
    // "gpuMemoryUtilization" has 20 letters: 6 edits still suggest it, 7 do not.
    expect(nearest('gpuMemoryUtilizXXXXXX', ['role', 'gpuMemoryUtilization'])).toBe('gpuMemoryUtilization');
    expect(nearest('gpuMemoryUtiXXXXXXX', ['role', 'gpuMemoryUtilization'])).toBeNull();
    // Short names: 2 edits.
    expect(nearest('rxxe', ['role'])).toBe('role');
    expect(nearest('rxxx', ['role'])).toBeNull();
  });

  it('the nearest of several wins; on a tie the first listed', () => {
    expect(nearest('args', ['env', 'args', 'role'])).toBe('args');
    expect(nearest('ab', ['ax', 'xb'])).toBe('ax');
  });

  it('a name of 64 letters still gets a suggestion; a longer one is not compared at all', () => {
    const field = 'a'.repeat(63);
    expect(nearest(`${field}b`, [field])).toBe(field);
    expect(nearest(`${field}bb`, [field])).toBeNull();
  });

  it('nothing to compare with: no suggestion', () => {
    expect(nearest('x', [])).toBeNull();
  });

  it('the fields of the object a path points to, through lists, defaults and maps', () => {
    expect(fieldsAt(recipeSchema, ['frontend'])).toEqual(['httpPort', 'routerMode', 'kvEvents', 'args', 'env']);
    expect(fieldsAt(recipeSchema, ['ports'])).toEqual(['system', 'kvEvents', 'nixlSideChannel']);
    expect(fieldsAt(recipeSchema, ['workers', 0, 'env'])).toEqual([]);
    expect(fieldsAt(recipeSchema, ['nothing'])).toEqual([]);
    expect(fieldsAt(recipeSchema, [0])).toEqual([]);
  });

  it('a typo inside a worker names the worker\'s fields', () => {
    expect(errorOf(`${minimal}    replicaz: 2\n`)).toBe('my.yaml: unknown field "workers.0.replicaz"; did you mean "workers.0.replicas"?');
  });
});

describe('model names', () => {
  it.each(['Qwen/Qwen3-0.6B', 'gpt2', 'org/name.v2', 'a', '/models/x', '~/m', './m', '.hidden', 'org/name/rev'])('%j is accepted', (m) => {
    expect(modelProblem(m)).toBeNull();
  });

  it('a name of 1024 characters is accepted; longer is not', () => {
    expect(modelProblem(`org/${'m'.repeat(1020)}`)).toBeNull();
    expect(modelProblem(`org/${'m'.repeat(1021)}`)).toBe('is longer than 1024 characters');
  });

  it.each([
    ['', 'must not be empty'],
    ['qwen model', 'must be a Hugging Face model id (org/name) or a path to a model folder'],
    ['m~', 'must be a Hugging Face model id (org/name) or a path to a model folder'],
    ['m.', null],
    ['-m', 'must not start with "-" (it would be read as an option)'],
  ])('%j: %s', (m, problem) => {
    expect(modelProblem(m)).toBe(problem);
  });

  it('an empty model in a recipe says so', () => {
    expect(errorOf(`${minimal}model: ""\n`)).toBe('my.yaml: model: must not be empty (got "")');
  });
});

describe('defaults a recipe gets', () => {
  it('env defaults to PYTHONHASHSEED=0; frontend args and env to nothing', () => {
    const r = parseRecipe(minimal, 'my.yaml');
    expect(r.env).toEqual({ PYTHONHASHSEED: '0' });
    expect(r.frontend.args).toEqual([]);
    expect(r.frontend.env).toEqual({});
  });

  it('a worker list over 64 entries, and a python that is an option', () => {
    const workers = Array.from({ length: 65 }, () => '{role: agg, gpuMemoryUtilization: 0.01}').join(', ');
    expect(errorOf(`name: t\nworkers: [${workers}]\n`)).toBe('my.yaml: workers: must list at most 64 workers (got [{"role":"agg","gpuMemoryUtilization":0.01},{"role":"agg","gpuMemoryUtilization…)');
    expect(errorOf(`${minimal}python: "-V"\n`)).toBe('my.yaml: python: must not start with "-" (it would be read as an option) (got "-V")');
    expect(errorOf(`${minimal}description: "a\\u001bb"\n`)).toBe('my.yaml: description: must be text without control characters (escape, NUL, ...) (got "a\\u001bb")');
  });
});
