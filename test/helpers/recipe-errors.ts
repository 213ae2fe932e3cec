import { expect } from 'vitest';
import { UserError } from '../../src/errors.js';
import { parseRecipe } from '../../src/recipe/load.js';

/** The UserError message parsing `text` (as my.yaml, with --set `sets`) gives; fails when it parses. */
export function recipeError(text: string, sets: string[] = []): string {
  try {
    parseRecipe(text, 'my.yaml', sets);
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return (e as Error).message;
  }
  throw new Error('expected a UserError');
}
