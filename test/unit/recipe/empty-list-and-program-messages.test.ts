import { describe, expect, it } from 'vitest';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// The one line a recipe error gives says what is wanted in words, not as a bare bound: an empty
// worker list or python is not "must be >= 1".
const worker = 'workers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';

describe('what an empty worker list or a bad python says', () => {
  it('no workers: the list must name one', () => {
    expect(errorOf('name: t\nworkers: []\n')).toBe('my.yaml: workers: must list at least one worker (got [])');
  });

  it('an empty python: must not be empty', () => {
    expect(errorOf(`name: t\npython: ""\n${worker}`)).toBe('my.yaml: python: must not be empty (got "")');
  });

  it('a python with a line break: a program without control characters', () => {
    expect(errorOf(`name: t\npython: "py\\nthon"\n${worker}`)).toBe(
      'my.yaml: python: must be a program without control characters (newline, tab, NUL, escape) (got "py\\nthon")',
    );
  });
});
