import type { z } from 'zod';

// "Did you mean": the valid field names at a path of the recipe schema, and the one nearest to a
// typo. Pure.

type Def = { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; element?: z.ZodType; in?: z.ZodType };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Strips defaults, optionals and transforms down to the schema that holds the fields. */
function unwrap(s: z.ZodType): z.ZodType {
  for (let i = 0; i < 10; i++) {
    const d = defOf(s);
    const inner = d.innerType ?? (d.type === 'pipe' ? d.in : undefined);
    if (!inner) return s;
    s = inner;
  }
  return s;
}

/** Field names of the object the path points to (list indexes step into the element); [] if none. */
export function fieldsAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  let s = unwrap(schema);
  for (const key of path) {
    const d = defOf(s);
    if (d.type === 'array' && d.element) s = unwrap(d.element);
    else if (d.type === 'object' && d.shape && typeof key === 'string' && key in d.shape) s = unwrap(d.shape[key]);
    else return [];
  }
  const d = defOf(s);
  return d.type === 'object' && d.shape ? Object.keys(d.shape) : [];
}

/** Edit distance (insert, delete, substitute, swap of neighbours), case-insensitive. */
export function editDistance(a: string, b: string): number {
  a = a.toLowerCase();
  b = b.toLowerCase();
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The candidate nearest to `name`, when near enough to be a typo of it (about a third of its letters). */
export function nearest(name: string, candidates: readonly string[]): string | null {
  if (name.length > 64) return null;
  let best: { c: string; d: number } | null = null;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (!best || d < best.d) best = { c, d };
  }
  if (!best) return null;
  return best.d <= Math.max(2, Math.floor(best.c.length / 3)) ? best.c : null;
}
