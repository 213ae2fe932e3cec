import { describe, expect, it } from 'vitest';
import { parseRecipe } from '../../../src/recipe/load.js';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// Issue 26's adversarial leftovers in recipe validation: a number past every bound is told the
// field's own limit, and an own `__proto__` key (which zod's records drop without a word) is refused.
const worker = (extra: string) => `name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n${extra}`;

describe('the tightest bound broken is the one shown', () => {
  it('replicas: 1e20 breaks both the safe-integer and the 16 limit: says 16 (was 2^53-1)', () => {
    expect(errorOf(worker('    replicas: 1e20\n'))).toBe('my.yaml: workers.0.replicas: must be <= 16 (got 100000000000000000000)');
  });
  it('replicas: -1e20 says the least is 1', () => {
    expect(errorOf(worker('    replicas: -1e20\n'))).toBe('my.yaml: workers.0.replicas: must be >= 1 (got -100000000000000000000)');
  });
  it('the boundary: 16 passes, 17 fails', () => {
    expect(parseRecipe(worker('    replicas: 16\n'), 'my.yaml').workers[0].replicas).toBe(16);
    expect(errorOf(worker('    replicas: 17\n'))).toBe('my.yaml: workers.0.replicas: must be <= 16 (got 17)');
  });
});

describe('__proto__ as a key', () => {
  const why = '"__proto__" is not a valid key here (a reserved name in JavaScript objects; an environment variable cannot be named so in a recipe)';
  it('env: {__proto__: {...}} is refused naming it (was accepted, and the env came out empty)', () => {
    expect(errorOf(`${worker('')}env:\n  __proto__: {A: b}\n  B: c\n`)).toBe(`my.yaml: env.__proto__: ${why}`);
  });
  it('in a worker\'s env too', () => {
    expect(errorOf(worker('    env: {__proto__: x}\n'))).toBe(`my.yaml: workers.0.env.__proto__: ${why}`);
  });
  it('an env var that only contains the word is fine', () => {
    expect(parseRecipe(`${worker('')}env:\n  MY__proto__VAR: x\n`, 'my.yaml').env).toEqual({ MY__proto__VAR: 'x' });
  });
});
