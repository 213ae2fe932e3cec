import { describe, expect, it } from 'vitest';
import { parseRecipe } from '../../../src/recipe/load.js';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// yaml's alias limit is no plain count of `*name` uses: the anchor counts too, and an alias nested
// inside an anchored value multiplies (yaml 2.9 dist/nodes/Alias.js). The message says so, and the
// boundaries below are where a recipe author meets it.

const BOMB = 'my.yaml: invalid YAML: its aliases (*name) expand too far (an anchored value and its aliases may appear at most 100 times in all, an alias inside that value counting as often as its own anchor appears); write the values out';

/** One worker whose args are an anchored flag and `uses` aliases to it. */
const scalarUses = (uses: number) => `name: t\nworkers:\n  - role: agg\n    args: [&f --enforce-eager${', *f'.repeat(uses)}]\n`;

/** A first worker whose args list is anchored and holds one alias; `uses` more workers reuse that list. */
const nestedUses = (uses: number) =>
  `name: t\nworkers:\n  - role: agg\n    args: &l [&a --enforce-eager, *a]\n${'  - role: agg\n    args: *l\n'.repeat(uses)}`;

describe('the alias limit, as yaml counts it', () => {
  it('a scalar: the anchor and 99 aliases pass (100 appearances), a 100th alias is refused', () => {
    expect(parseRecipe(scalarUses(99), 'my.yaml').workers[0].args).toHaveLength(100);
    expect(errorOf(scalarUses(100))).toBe(BOMB);
  });

  it('a list holding an alias that appeared twice counts twice: 49 reuses pass, the 50th is refused (not "more than 100 uses")', () => {
    expect(parseRecipe(nestedUses(49), 'my.yaml').workers).toHaveLength(50);
    expect(errorOf(nestedUses(50))).toBe(BOMB);
  });
});
