import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinRecipeDir, compiledEntry, type CompiledBuiltins } from '../../../src/host/files/recipes.js';
import { parseRecipe } from '../../../src/recipe/load.js';
import { ROOT } from '../../helpers/cli.js';

// The build validates every built-in recipe once (dist/recipes.json) so doctor and up load one
// without the YAML parser and the schema library; what they get must be what parsing gives.

const names = readdirSync(builtinRecipeDir).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -5));

describe('built-in recipes compiled at build time', () => {
  it.each(names)('%s: the built CLI loads exactly what parsing its YAML gives', async (name) => {
    const { loadRecipe } = (await import(join(ROOT, 'dist', 'host', 'files', 'recipes.js'))) as typeof import('../../../src/host/files/recipes.js');
    const text = readFileSync(join(builtinRecipeDir, `${name}.yaml`), 'utf8');
    expect(await loadRecipe(name)).toEqual(parseRecipe(text, `${name} (built-in)`));
    // --set overrides are applied by parsing, as before.
    expect((await loadRecipe(name, ['maxModelLen=2048'])).maxModelLen).toBe(2048);
  });

  it('loading a built-in in the built CLI loads no YAML parser (a recipe file still does)', () => {
    const probe = `import Module from 'node:module';
const m = await import(${JSON.stringify(join(ROOT, 'dist', 'host', 'files', 'recipes.js'))});
await m.loadRecipe(process.argv[1]);
console.log(Object.keys(Module._cache).some((k) => k.includes('/node_modules/yaml/')));`;
    const yamlLoaded = (ref: string) => execFileSync(process.execPath, ['--input-type=module', '-e', probe, ref], { encoding: 'utf8' }).trim();
    expect(yamlLoaded('agg')).toBe('false');
    expect(yamlLoaded(join(builtinRecipeDir, 'agg.yaml'))).toBe('true');
  });

  it('a copy made from other text than the recipe file now holds is never used', () => {
    const recipe = parseRecipe(readFileSync(join(builtinRecipeDir, 'agg.yaml'), 'utf8'), 'agg');
    const table: CompiledBuiltins = { agg: { text: 'name: agg\n', recipe } };
    expect(compiledEntry(table, 'agg', 'name: agg\n')).toBe(recipe);
    expect(compiledEntry(table, 'agg', 'name: agg\nmaxModelLen: 2048\n')).toBeNull();
    expect(compiledEntry(table, 'toString', 'x')).toBeNull();
    expect(compiledEntry(null, 'agg', 'name: agg\n')).toBeNull();
  });
});
