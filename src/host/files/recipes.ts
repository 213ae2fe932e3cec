import { open, readFile, readdir } from 'node:fs/promises';
import { constants as fsConstants, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../../errors.js';
import { MAX_RECIPE_BYTES } from '../../recipe/limits.js';
import type { Recipe } from '../../recipe/schema.js';
import { nearest } from '../../recipe/suggest.js';

// yaml and zod (the recipe schema) load only when a recipe is parsed: ~70 ms of start-up that
// doctor spends with its probes already running.

/** recipes/ at the package root (dist/host/files/ -> ../../../recipes; src/host/files/ in tests likewise). */
export const builtinRecipeDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'recipes');

/** The built-in recipes validated at build time (host/files/compile-builtins.ts): dist/recipes.json; none beside src/. */
export const COMPILED_BUILTINS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'recipes.json');

export type CompiledBuiltins = Record<string, { text: string; recipe: Recipe }>;

/** Pure: the build's validated copy of a built-in recipe, only if it was made from exactly this text (else null: parse it). */
export function compiledEntry(table: CompiledBuiltins | null, name: string, text: string): Recipe | null {
  const entry = table && Object.hasOwn(table, name) ? table[name] : undefined;
  return entry && entry.text === text ? entry.recipe : null;
}

let compiled: Promise<CompiledBuiltins | null> | undefined;
async function compiledBuiltin(name: string, text: string): Promise<Recipe | null> {
  compiled ??= readFile(COMPILED_BUILTINS, 'utf8').then((t) => JSON.parse(t) as CompiledBuiltins, () => null);
  return compiledEntry(await compiled, name, text);
}

export interface BuiltinRecipe {
  name: string;
  description: string;
  path: string;
}

export async function listBuiltinRecipes(): Promise<BuiltinRecipe[]> {
  const { parse } = await import('yaml');
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

/**
 * What an unknown recipe name most likely meant: the one built-in it starts (`disagg` ->
 * disagg-same-gpu), a built-in within typo distance (`agg-rooter`), or a YAML file of that name here
 * (`./mine.yaml`).
 */
export function recipeGuess(ref: string, builtins: readonly string[], exists: (path: string) => boolean): string | null {
  const starts = ref.length >= 3 ? builtins.filter((n) => n.startsWith(ref)) : [];
  if (starts.length === 1) return starts[0];
  const typo = nearest(ref, builtins);
  if (typo) return typo;
  if (/^[\w.-]+$/.test(ref)) for (const ext of ['.yaml', '.yml']) if (exists(`${ref}${ext}`)) return `./${ref}${ext}`;
  return null;
}

export function isRecipePath(ref: string): boolean {
  return ref.includes('/') || ref.endsWith('.yaml') || ref.endsWith('.yml');
}

/** A built-in name or a YAML path -> the recipe source text and where it came from. */
export async function readRecipeSource(ref: string): Promise<{ text: string; source: string }> {
  if (isRecipePath(ref)) return { text: await readBounded(ref), source: ref };
  const path = join(builtinRecipeDir, `${ref}.yaml`);
  if (!/^[\w.-]+$/.test(ref) || !existsSync(path)) {
    const names = (await listBuiltinRecipes()).map((r) => r.name);
    const guess = recipeGuess(ref, names, (f) => existsSync(f));
    throw new UserError(`unknown recipe "${ref}";${guess ? ` did you mean "${guess}"?` : ''} built-in recipes: ${names.join(', ')} (or give a path to a YAML file)`);
  }
  return { text: await readFile(path, 'utf8'), source: `${ref} (built-in)` };
}

/**
 * A recipe file, read only if it is a regular file of at most MAX_RECIPE_BYTES: `/dev/zero` or a
 * 200 MB file would otherwise be read whole (and a FIFO would block forever).
 */
async function readBounded(path: string): Promise<string> {
  const fail = (why: string) => new UserError(`${path}: ${why}`);
  let fh;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it.
    fh = await open(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw fail(code === 'ENOENT' ? 'no such recipe file' : `cannot read recipe (${code ?? String(err)})`);
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw fail('is a folder; give a recipe YAML file');
    if (!st.isFile()) throw fail('is not a regular file (a device, pipe or socket); give a recipe YAML file');
    if (st.size > MAX_RECIPE_BYTES) {
      throw fail(`${(st.size / (1024 * 1024)).toFixed(1)} MiB is too large for a recipe (at most ${MAX_RECIPE_BYTES / (1024 * 1024)} MiB)`);
    }
    // Read at most one byte past the limit: a file that grows meanwhile is still refused.
    const buf = Buffer.alloc(MAX_RECIPE_BYTES + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n === buf.length) throw fail(`is too large for a recipe (at most ${MAX_RECIPE_BYTES / (1024 * 1024)} MiB)`);
    }
    return buf.subarray(0, n).toString('utf8');
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw fail(`cannot read recipe (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  } finally {
    await fh.close();
  }
}

export async function loadRecipe(ref: string, sets: string[] = []): Promise<Recipe> {
  const { text, source } = await readRecipeSource(ref);
  if (sets.length === 0 && !isRecipePath(ref)) {
    const ready = await compiledBuiltin(ref, text);
    if (ready) return ready;
  }
  const { parseRecipe } = await import('../../recipe/load.js');
  return parseRecipe(text, source, sets);
}
