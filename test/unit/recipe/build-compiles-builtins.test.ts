import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseRecipe } from '../../../src/recipe/load.js';

// The build step (host/files/compile-builtins.ts, run by `npm run build`) on a recipes folder of our
// own: what it writes to dist/recipes.json is what doctor and up load for a built-in recipe.
const at = vi.hoisted(() => {
  const root = `${process.env.TMPDIR ?? '/tmp'}/dd-compile-builtins-${process.pid}`;
  return { root, recipes: `${root}/recipes`, out: `${root}/recipes.json` };
});
vi.mock('../../../src/host/files/recipes.js', () => ({ builtinRecipeDir: at.recipes, COMPILED_BUILTINS: at.out }));
// The folder listed in reverse name order, as a file system may list it.
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readdirSync = ((path: string) => (fs.readdirSync(path) as string[]).sort().reverse()) as typeof fs.readdirSync;
  return { ...fs, default: { ...fs, readdirSync }, readdirSync };
});

const recipe = (name: string, extra = '') => `name: ${name}\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n${extra}`;

async function build(files: Record<string, string>): Promise<string> {
  for (const [name, text] of Object.entries(files)) writeFileSync(`${at.recipes}/${name}`, text);
  vi.resetModules();
  await import('../../../src/host/files/compile-builtins.js');
  return readFileSync(at.out, 'utf8');
}

beforeEach(() => mkdirSync(at.recipes, { recursive: true }));
afterEach(() => rmSync(at.root, { recursive: true, force: true }));

describe('npm run build compiles the built-in recipes', () => {
  it('every .yaml file, under its name without .yaml, with its text and the recipe parsing gives', async () => {
    const agg = recipe('agg');
    const mocker = recipe('mocker', 'engine: mocker\n');
    const out = JSON.parse(await build({ 'agg.yaml': agg, 'mocker.yaml': mocker })) as Record<string, unknown>;
    expect(out).toEqual({
      agg: { text: agg, recipe: parseRecipe(agg, 'agg') },
      mocker: { text: mocker, recipe: parseRecipe(mocker, 'mocker') },
    });
  });

  it('files that are not .yaml recipes are left out', async () => {
    const out = JSON.parse(await build({ 'agg.yaml': recipe('agg'), 'README.md': '# recipes\n', 'agg.yml.orig': 'x: [\n', 'yaml': 'x: [\n' })) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['agg']);
  });

  it('the file is the same whatever order the folder lists its files in (name order, one line)', async () => {
    const text = await build({ 'b.yaml': recipe('b'), 'a.yaml': recipe('a'), 'c.yaml': recipe('c') });
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['a', 'b', 'c']);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.split('\n')).toHaveLength(2);
  });

  it('a built-in recipe that does not validate fails the build, naming it', async () => {
    await expect(build({ 'agg.yaml': recipe('agg'), 'broken.yaml': recipe('broken', 'maxModelLen: 8\n') })).rejects.toThrow(
      'broken (built-in): maxModelLen: must be >= 16 (got 8)',
    );
  });
});
