import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRecipe } from '../../recipe/load.js';
import { builtinRecipeDir, COMPILED_BUILTINS } from './recipes.js';

// Build step (npm run build, after tsc): every built-in recipe validated once, written with its
// source text to dist/recipes.json. Loading a built-in recipe then needs neither the YAML parser
// nor the schema library (~80 ms of every doctor and up start); host/files/recipes.ts uses an entry
// only while its text is still the recipe file's, and parses the file otherwise.

const out: Record<string, { text: string; recipe: unknown }> = {};
for (const f of readdirSync(builtinRecipeDir).filter((n) => n.endsWith('.yaml')).sort()) {
  const name = f.slice(0, -'.yaml'.length);
  const text = readFileSync(join(builtinRecipeDir, f), 'utf8');
  out[name] = { text, recipe: parseRecipe(text, `${name} (built-in)`) };
}
writeFileSync(COMPILED_BUILTINS, `${JSON.stringify(out)}\n`);
