import { stringify } from 'yaml';
import { loadRecipe, readRecipeSource } from '../host/files/recipes.js';
import type { CommandContext } from './context.js';

export default async function recipesShow(ctx: CommandContext, name: string): Promise<number> {
  if (ctx.json) {
    ctx.stdout.write(`${JSON.stringify(await loadRecipe(name))}\n`);
    return 0;
  }
  // Validate first so a broken file is reported, then print the file as written (comments kept).
  await loadRecipe(name);
  const { text } = await readRecipeSource(name);
  ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  void stringify;
  return 0;
}
