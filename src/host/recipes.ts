import { readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { UserError } from '../errors.js';
import { parseRecipe } from '../recipe/load.js';
import type { Recipe } from '../recipe/schema.js';

/** recipes/ at the package root (dist/host/ -> ../../recipes; src/host/ in tests likewise). */
export const builtinRecipeDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'recipes');

export interface BuiltinRecipe {
  name: string;
  description: string;
  path: string;
}

export async function listBuiltinRecipes(): Promise<BuiltinRecipe[]> {
  const names = (await readdir(builtinRecipeDir)).filter((f) => f.endsWith('.yaml')).sort();
  const order = ['agg', 'agg-router', 'agg-router-approx', 'disagg-same-gpu', 'mocker'];
  const out: BuiltinRecipe[] = [];
  for (const f of names) {
    const path = join(builtinRecipeDir, f);
    const doc = parse(await readFile(path, 'utf8')) as { name?: string; description?: string };
    out.push({ name: f.replace(/\.yaml$/, ''), description: doc.description ?? '', path });
  }
  return out.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
  function rank(n: string) {
    const i = order.indexOf(n);
    return i < 0 ? order.length : i;
  }
}

export function isRecipePath(ref: string): boolean {
  return ref.includes('/') || ref.endsWith('.yaml') || ref.endsWith('.yml');
}

/** A built-in name or a YAML path -> the recipe source text and where it came from. */
export async function readRecipeSource(ref: string): Promise<{ text: string; source: string }> {
  if (isRecipePath(ref)) {
    try {
      return { text: await readFile(ref, 'utf8'), source: ref };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UserError(`${ref}: ${code === 'ENOENT' ? 'no such recipe file' : `cannot read recipe (${code ?? String(err)})`}`);
    }
  }
  const path = join(builtinRecipeDir, `${ref}.yaml`);
  if (!/^[\w.-]+$/.test(ref) || !existsSync(path)) {
    const names = (await listBuiltinRecipes()).map((r) => r.name).join(', ');
    throw new UserError(`unknown recipe "${ref}"; built-in recipes: ${names} (or give a path to a YAML file)`);
  }
  return { text: await readFile(path, 'utf8'), source: `${ref} (built-in)` };
}

export async function loadRecipe(ref: string, sets: string[] = []): Promise<Recipe> {
  const { text, source } = await readRecipeSource(ref);
  return parseRecipe(text, source, sets);
}
