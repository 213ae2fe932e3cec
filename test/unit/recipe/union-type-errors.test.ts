import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';
import { formatIssue } from '../../../src/recipe/load.js';

// The recipe's two unions (a fraction: number or "auto"; an env value: string, number or boolean)
// reach zod's invalid_union only with a value no branch takes the type of. A number out of range
// is the number branch's own range error (zod 4 reports the one branch past its type check).

const minimal = 'name: t\nworkers:\n  - role: agg\n';

describe('a value of a type no branch of a union takes', () => {
  it('an env value that is a list or a map: the field and the value, one line', () => {
    expect(errorOf(`${minimal}env: {A: [1, 2]}\n`)).toBe('my.yaml: env.A: must be string, number or boolean (got [1,2])');
    expect(errorOf(`${minimal}    env: {B: {c: 1}}\n`)).toBe('my.yaml: workers.0.env.B: must be string, number or boolean (got {"c":1})');
  });

  it('YAML\'s .nan and .inf are shown as what they are, never as "null"', () => {
    expect(errorOf(`${minimal}env: {A: .nan}\n`)).toBe('my.yaml: env.A: must be string, number or boolean (got NaN)');
    expect(errorOf(`${minimal}    gpuMemoryUtilization: .inf\n`)).toBe('my.yaml: workers.0.gpuMemoryUtilization: must be number or "auto" (got Infinity)');
    expect(errorOf(`${minimal}maxModelLen: -.inf\n`)).toBe('my.yaml: maxModelLen: must be number (got -Infinity)');
  });

  it('a fraction that is a boolean is the wrong type; one out of range says the range (not a union error)', () => {
    expect(errorOf(`${minimal}    gpuMemoryUtilization: true\n`)).toBe('my.yaml: workers.0.gpuMemoryUtilization: must be number or "auto" (got true)');
    expect(errorOf(`${minimal}    gpuMemoryUtilization: 1.5\n`)).toBe('my.yaml: workers.0.gpuMemoryUtilization: must be a fraction in (0, 1] or "auto" (got 1.5)');
    expect(errorOf(`${minimal}    gpuMemoryUtilization: 0\n`)).toBe('my.yaml: workers.0.gpuMemoryUtilization: must be a fraction in (0, 1] or "auto" (got 0)');
  });
});

describe('what a union error says it takes', () => {
  it('a branch that objects to something other than the type or the value leaves the plain words', () => {
    const issue = {
      code: 'invalid_union', path: ['env', 'A'], message: 'Invalid input', input: 'x',
      errors: [[{ code: 'invalid_type', expected: 'number', path: [], message: 'x', input: 'x' }], [{ code: 'custom', path: [], message: 'no control characters', input: 'x' }]],
    } as unknown as z.core.$ZodIssue;
    expect(formatIssue(issue, { env: { A: 'x' } })).toBe('env.A: has the wrong type (got "x")');
    const nested = { ...issue, errors: [[{ code: 'invalid_type', expected: 'number', path: ['deeper'], message: 'x', input: 'x' }]] } as unknown as z.core.$ZodIssue;
    expect(formatIssue(nested, { env: { A: 'x' } })).toBe('env.A: has the wrong type (got "x")');
    const one = { ...issue, errors: [[{ code: 'invalid_type', expected: 'number', path: [], message: 'x', input: 'x' }], [{ code: 'invalid_type', expected: 'number', path: [], message: 'x', input: 'x' }]] } as unknown as z.core.$ZodIssue;
    expect(formatIssue(one, { env: { A: 'x' } })).toBe('env.A: must be number (got "x")');
  });
});
