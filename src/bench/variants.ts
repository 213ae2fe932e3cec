import { UserError } from '../errors.js';
import { BENCH_MAX_CONCURRENCY, BENCH_MAX_CONCURRENCY_LEVELS } from '../defaults.js';
import { PRESET_NAMES, PRESETS, type Engine, type Preset } from './presets.js';

// Which variants a bench runs, in order: pure. The recipes given (or a preset's), each crossed with
// every --vary combination. A variant is a recipe plus --set overrides; loading it (and so finding an
// unknown --vary key) is the command's job before anything starts.

export interface VariantSpec {
  name: string;
  recipe: string;
  /** --set PATH=VALUE overrides, in the order they apply. */
  sets: Record<string, string>;
  /** Set when the variant cannot be measured here (its status is `missing` with this reason). */
  unmeasurable: string | null;
  /** A preset's control: expected invalid by this gate (its invalid verdict is then no failure). */
  control?: { gate: string; why: string } | null;
}

export interface Vary {
  key: string;
  values: string[];
}

/** `--vary KEY=V1,V2` -> { key, values }; bad shape is an input error naming the flag. */
export function parseVary(arg: string): Vary {
  const eq = arg.indexOf('=');
  const key = eq > 0 ? arg.slice(0, eq).trim() : '';
  const values = eq > 0 ? arg.slice(eq + 1).split(',').map((v) => v.trim()) : [];
  if (!key || values.length === 0 || values.some((v) => v === '')) {
    throw new UserError(`--vary ${JSON.stringify(arg)}: expected KEY=V1,V2,... (a recipe field path and its values), e.g. --vary frontend.routerMode=kv,round-robin,random`);
  }
  if (new Set(values).size !== values.length) throw new UserError(`--vary ${JSON.stringify(arg)}: a value is given twice; each variant must differ`);
  return { key, values };
}

/** `--concurrency 1,4` -> [1, 4]: whole numbers from 1 to BENCH_MAX_CONCURRENCY, no repeats, at most BENCH_MAX_CONCURRENCY_LEVELS. */
export function parseConcurrency(args: string[]): number[] {
  const out: number[] = [];
  for (const raw of args) {
    const n = raw.trim() === '' ? NaN : Number(raw);
    if (!Number.isSafeInteger(n) || n < 1 || n > BENCH_MAX_CONCURRENCY) {
      throw new UserError(`--concurrency: ${JSON.stringify(raw)} is not a whole number from 1 to ${BENCH_MAX_CONCURRENCY} (e.g. --concurrency 1,4)`);
    }
    if (!out.includes(n)) out.push(n);
  }
  if (out.length > BENCH_MAX_CONCURRENCY_LEVELS) throw new UserError(`--concurrency: ${out.length} levels; at most ${BENCH_MAX_CONCURRENCY_LEVELS} (each is a load run per variant and repeat)`);
  return out;
}

export function findPreset(name: string): Preset {
  const p = Object.hasOwn(PRESETS, name) ? PRESETS[name] : undefined;
  if (!p) throw new UserError(`--preset: unknown preset ${JSON.stringify(name)}; valid: ${PRESET_NAMES.join(', ')}`);
  return p;
}

/** The last part of a field path: frontend.routerMode -> routerMode. */
const shortKey = (key: string) => key.split('.').pop() ?? key;

/**
 * The variants: every recipe crossed with every combination of the --vary values, in the order
 * given (the first recipe's first values first; the first variant is the one ratios compare to).
 */
export function expandVariants(recipes: string[], varies: Vary[]): VariantSpec[] {
  let combos: Record<string, string>[] = [{}];
  for (const v of varies) combos = combos.flatMap((c) => v.values.map((value) => ({ ...c, [v.key]: value })));
  const keys = new Set<string>();
  for (const v of varies) {
    if (keys.has(v.key)) throw new UserError(`--vary ${v.key} is given twice; give all its values in one --vary ${v.key}=V1,V2`);
    keys.add(v.key);
  }
  const out: VariantSpec[] = [];
  for (const recipe of recipes) {
    for (const sets of combos) {
      const label = Object.entries(sets).map(([k, val]) => `${shortKey(k)}=${val}`).join(' ');
      const name = [recipes.length > 1 || !label ? recipe : '', label].filter(Boolean).join(' ');
      out.push({ name, recipe, sets, unmeasurable: null });
    }
  }
  const names = out.map((v) => v.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new UserError(`variant "${twice}" would run twice: give each recipe once`);
  return out;
}

/** A preset's variants for the engine this machine runs (vllm with a GPU, else the mocker). */
export function presetVariants(preset: Preset, engine: Engine, varies: Vary[] = []): VariantSpec[] {
  const base = preset.variants.map((v) => ({
    name: v.name,
    recipe: v.recipe[engine],
    sets: { ...v.sets, ...(v.engineSets?.[engine] ?? {}) },
    unmeasurable: v.unmeasurable?.[engine] ?? null,
    control: v.control ?? null,
  }));
  if (varies.length === 0) return base;
  // --vary on a preset crosses each of its variants with the values.
  return base.flatMap((b) => expandVariants([b.recipe], varies).map((x) => ({
    ...b, name: `${b.name} ${x.name}`, sets: { ...b.sets, ...x.sets },
  })));
}

/**
 * `--variants a,b`: only those of the preset's variants, in the preset's order (its first is the
 * reference the ratios compare to). With --vary, a name picks every variant crossed from it.
 * An unknown name is an input error listing the preset's.
 */
export function pickVariants(specs: VariantSpec[], preset: Preset, names: string[] | undefined): VariantSpec[] {
  if (!names || names.length === 0) return specs;
  const known = preset.variants.map((v) => v.name);
  const bad = names.filter((n) => !known.includes(n));
  if (bad.length > 0) throw new UserError(`--variants: preset ${preset.name} has no variant ${bad.map((b) => JSON.stringify(b)).join(', ')}; its variants: ${known.join(', ')}`);
  const base = (name: string) => known.find((k) => name === k || name.startsWith(`${k} `));
  return specs.filter((s) => names.includes(base(s.name) ?? ''));
}

const setKey = (arg: string) => arg.slice(0, Math.max(0, arg.indexOf('='))).trim();

/**
 * A `--set` of a field the variants differ in is refused: that field is what they compare, and
 * setting it for all of them would measure one thing several times. The message names each
 * variant's value.
 */
export function refuseComparedSets(specs: Pick<VariantSpec, 'name' | 'sets'>[], userSets: string[]): void {
  for (const key of userSets.map(setKey).filter(Boolean)) {
    const values = specs.map((v) => (Object.hasOwn(v.sets, key) ? v.sets[key] : undefined));
    if (new Set(values).size < 2) continue;
    const shown = specs.map((v, i) => `${v.name}: ${values[i] ?? "the recipe's"}`).join(', ');
    throw new UserError(`--set ${key}: the variants differ in this field (${shown}), so it is what they compare; leave it to them, or pick variants with --variants and values with --vary`);
  }
}

/**
 * The `--set` arguments a variant's recipe loads with: its own, then the user's, which win (a
 * preset's engine tuning such as the mocker's `workers.0.replicas` used to win and silently drop
 * the user's `--set`). A field given by both is given once, the user's.
 */
export function variantSetArgs(v: Pick<VariantSpec, 'sets'>, userSets: string[]): string[] {
  const users = new Set(userSets.map(setKey));
  return [...Object.entries(v.sets).filter(([k]) => !users.has(k)).map(([k, val]) => `${k}=${val}`), ...userSets];
}
