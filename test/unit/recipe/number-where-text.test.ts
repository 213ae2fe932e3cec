import { describe, expect, it } from 'vitest';
import { parseRecipe } from '../../../src/recipe/load.js';
import { recipeError } from '../../helpers/recipe-errors.js';

// YAML (and --set) read `32` as a number; an engine argument is text.
// The one line says so and how to write it, instead of a bare "must be string".
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';

describe('a number or boolean where the recipe wants text', () => {
  it('an argument after its flag, from the file and from --set: quote it', () => {
    expect(recipeError(`${minimal}    args: ["--max-num-seqs", 32]\n`, [])).toBe('my.yaml: workers.0.args.1: must be a string (got 32; quote it: "32")');
    expect(recipeError(`${minimal}    args: ["--max-num-seqs"]\n`, ['workers.0.args.1=32'])).toMatch(/workers\.0\.args\.1: must be a string \(got 32; quote it: "32"\)$/);
  });

  it('the quoted form is accepted', () => {
    expect(parseRecipe(`${minimal}    args: ["--max-num-seqs", "32"]\n`, 'my.yaml', []).workers[0].args).toEqual(['--max-num-seqs', '32']);
    expect(parseRecipe(`${minimal}    args: ["--max-num-seqs"]\n`, 'my.yaml', ['workers.0.args.1="32"']).workers[0].args).toEqual(['--max-num-seqs', '32']);
  });
});
