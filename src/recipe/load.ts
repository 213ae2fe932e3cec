import { parseDocument, parse as parseYamlScalar } from 'yaml';
import type { z } from 'zod';
import { UserError } from '../errors.js';
import { listWords } from '../list-words.js';
import { REJECTED_VALUES, recipeSchema, type Recipe } from './schema.js';
import { fieldsAt, nearest } from './suggest.js';
import { MAX_RECIPE_BYTES } from './limits.js';

export { MAX_RECIPE_BYTES };

/**
 * yaml's maxAliasCount (its guard against "billion laughs" files). It is no plain count of `*name`
 * uses: per anchor, the anchor plus its aliases so far, times the largest such count of an alias
 * nested inside the anchored value (yaml 2.9 dist/nodes/Alias.js, resolve and getAliasCount), may
 * not exceed it. So 99 uses of a scalar pass and 100 fail; a list holding one used alias may be used 49 times.
 */
const MAX_ALIASES = 100;
/** Highest list index `--set` may name: the next free slot at most, and never beyond this. */
const MAX_SET_INDEX = 63;

/** Parses, overrides and validates recipe text. Pure: the caller reads the file. */
export function parseRecipe(text: string, source: string, sets: string[] = []): Recipe {
  if (text.length > MAX_RECIPE_BYTES) {
    throw new UserError(`${source}: ${sizeText(text.length)} is too large for a recipe (at most ${sizeText(MAX_RECIPE_BYTES)})`);
  }
  const deep = nestingProblem(text);
  if (deep) throw new UserError(`${source}: invalid YAML: ${deep}`);
  // Stryker disable next-line ObjectLiteral: yaml 2 defaults to prettyErrors (dist/public-api.js: `options.prettyErrors !== false`); stated because the line numbers below rely on it
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    // Stryker disable next-line OptionalChaining: yaml sets linePos as pos.map(...), two entries, never empty (dist/errors.js prettifyError)
    const line = e.linePos?.[0]?.line;
    throw new UserError(`${source}${line ? `:${line}` : ''}: invalid YAML: ${oneLine(e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, ''))}`);
  }
  let raw: unknown;
  try {
    // Stryker disable next-line ObjectLiteral: yaml's own default maxAliasCount is 100 too (dist/doc/Document.js), equal while MAX_ALIASES is 100; stated because the message below names it
    raw = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    // yaml throws "Excessive alias count indicates a resource exhaustion attack" for alias bombs
    // (yaml 2.9, dist/nodes/Alias.js). Its other errors here say their cause themselves: an alias
    // to no anchor ("Unresolved alias ...: name"), a YAML 1.1 merge of a non-map ("Merge sources
    // must be maps or map aliases"); matching any "alias" once called those a bomb.
    const bomb = /excessive alias count/i.test((err as Error).message);
    throw new UserError(bomb
      ? `${source}: invalid YAML: its aliases (*name) expand too far (an anchored value and its aliases may appear at most ${MAX_ALIASES} times in all, an alias inside that value counting as often as its own anchor appears); write the values out`
      : `${source}: invalid YAML: ${oneLine((err as Error).message)}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new UserError(`${source}: a recipe is a YAML mapping (name:, workers:, ...), got ${raw === null ? 'nothing' : Array.isArray(raw) ? 'a list' : typeof raw}`);
  }
  const loop = selfReference(raw, '', new Map());
  if (loop) throw new UserError(`${source}: ${loop}`);
  const obj = raw as Record<string, unknown>;
  for (const s of sets) applySet(obj, s);
  return validateRecipe(obj, source);
}

/**
 * A value that contains itself (an alias inside its own anchor, `workers: &w [*w]`) is valid YAML
 * but no recipe; showing it in a message used to crash (JSON.stringify of a cycle). `open` holds
 * the values being walked, with their paths; the walk costs what the expanded file does, which
 * MAX_ALIASES bounds.
 */
function selfReference(v: unknown, path: string, open: Map<object, string>): string | null {
  if (v === null || typeof v !== 'object') return null;
  const outer = open.get(v);
  if (outer !== undefined) return `${path} refers back to ${outer || 'the whole file'} (an alias inside its own anchor); a recipe cannot contain itself`;
  open.set(v, path);
  for (const [k, child] of Object.entries(v)) {
    const at = path ? `${path}.${k}` : k;
    // zod's records skip an own `__proto__` key without a word (an env of `__proto__: {...}` came
    // out empty), and no field of a recipe is named so: say it, rather than drop what follows.
    if (k === '__proto__') return `${at}: "__proto__" is not a valid key here (a reserved name in JavaScript objects; an environment variable cannot be named so in a recipe)`;
    const found = selfReference(child, at, open);
    if (found) return found;
  }
  open.delete(v);
  return null;
}

export function validateRecipe(obj: unknown, source: string): Recipe {
  const r = recipeSchema.safeParse(obj);
  if (!r.success) throw new UserError(`${source}: ${formatIssue(firstIssue(r.error.issues), obj)}`);
  return r.data;
}

/**
 * The issue to show: an unknown field first. A typo (`workerz:`) also makes the real field
 * missing; "workers: is required" alone would hide the cause.
 */
export function firstIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue {
  const unknown = issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown) return unknown;
  // `replicas: 1e20` breaks both `.int()` (a safe integer, <= 2^53-1) and `.max(16)`: the tighter
  // bound is the field's real limit, so of the bounds broken at the first issue's path, show it.
  const first = issues[0];
  const samePath = (i: z.core.$ZodIssue) => i.path.length === first.path.length && i.path.every((p, n) => p === first.path[n]);
  if (first.code === 'too_big') {
    const bigs = issues.filter((i): i is z.core.$ZodIssueTooBig => i.code === 'too_big' && samePath(i));
    return bigs.reduce((a, b) => (Number(b.maximum) < Number(a.maximum) ? b : a));
  }
  if (first.code === 'too_small') {
    const smalls = issues.filter((i): i is z.core.$ZodIssueTooSmall => i.code === 'too_small' && samePath(i));
    return smalls.reduce((a, b) => (Number(b.minimum) > Number(a.minimum) ? b : a));
  }
  return first;
}

const sizeText = (bytes: number) => (bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`);

/** Text from the file (or a --set) in a one-line message: quoted, escapes visible, cut at 80 characters. */
function shown(v: unknown): string {
  // JSON has no NaN or Infinity (YAML's .nan, .inf): JSON.stringify would call them null.
  const s = typeof v === 'number' && !Number.isFinite(v) ? String(v) : JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

/** The deepest nesting a recipe may have: its real depth is 4. */
const MAX_DEPTH = 64;

/**
 * A cheap linear pre-scan: the YAML parser recurses per level, and a file of nothing but `[[[[`
 * makes it run out of memory and abort the process (not an error it reports). Flow brackets are
 * counted outside quotes and comments; block nesting shows as indentation or `- - -`.
 */
export function nestingProblem(text: string): string | null {
  let depth = 0;
  let quote: '"' | "'" | null = null;
  let lineStart = true;
  let indent = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') {
      lineStart = true;
      indent = 0;
      if (quote === null) continue;
    }
    if (quote !== null) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (lineStart) {
      if (c === ' ') {
        if (++indent > MAX_DEPTH * 8) return `indented more than ${MAX_DEPTH * 8} spaces; a recipe nests a few levels`;
        continue;
      }
      lineStart = false;
      const dashes = /^(?:-[ \t]+)+/.exec(text.slice(i, i + 4 * MAX_DEPTH));
      if (dashes && dashes[0].split('-').length - 1 > MAX_DEPTH) return `nested deeper than ${MAX_DEPTH} levels; a recipe nests a few`;
    }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) {
      const nl = text.indexOf('\n', i);
      if (nl < 0) break;
      i = nl - 1;
    } else if ((c === '"' || c === "'") && (i === 0 || /[\s[{,:]/.test(text[i - 1]))) {
      quote = c; // a quoted scalar starts at a token boundary; the ' in a plain `it's` does not quote
    } else if (c === '[' || c === '{') {
      if (++depth > MAX_DEPTH) return `nested deeper than ${MAX_DEPTH} levels; a recipe nests a few`;
    } else if ((c === ']' || c === '}') && depth > 0) {
      depth--;
    }
  }
  return null;
}

/** A --set as typed when it is plain printable text, else quoted with its escapes visible. */
const arg = (s: string) => (/^[\x20-\x7e]{1,80}$/.test(s) ? s : shown(s));

const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');

/** One line naming the field and what would be valid. */
export function formatIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const path = issue.path.map(String).join('.');
  const at = path ? `${path}: ` : '';
  const got = valueAt(input, issue.path as (string | number)[]);
  const gotText = got === undefined ? '' : ` (got ${shown(got)})`;
  switch (issue.code) {
    case 'unrecognized_keys': {
      const where = path ? `${path}.` : '';
      const valid = fieldsAt(recipeSchema, issue.path as (string | number)[]);
      const guess = issue.keys.length === 1 ? nearest(issue.keys[0], valid) : null;
      const names = issue.keys.map((k) => shown(`${where}${k}`)).join(', ');
      if (guess) return `unknown field ${names}; did you mean "${where}${guess}"?`;
      return `unknown field ${names}; valid here: ${valid.join(', ')} (see docs/recipes.md)`;
    }
    case 'invalid_key': {
      const key = issue.path[issue.path.length - 1];
      const parent = issue.path.slice(0, -1).map(String).join('.');
      // Stryker disable next-line OptionalChaining,StringLiteral: zod 4 raises invalid_key only with the key schema's own issues, never an empty list (core/schemas.js, $ZodRecord)
      const why = issue.issues[0]?.message ?? 'is not a valid key';
      return `${parent}: ${shown(String(key))} ${why}`;
    }
    case 'too_big':
    case 'too_small': {
      const lo = issue.code === 'too_small' ? `${issue.inclusive ? '>=' : '>'} ${String(issue.minimum)}` : null;
      const hi = issue.code === 'too_big' ? `${issue.inclusive ? '<=' : '<'} ${String(issue.maximum)}` : null;
      if (issue.message.startsWith('must ')) return `${at}${issue.message}${gotText}`;
      return `${at}must be ${lo ?? hi}${gotText}`;
    }
    case 'invalid_value': {
      const why = typeof got === 'string' ? REJECTED_VALUES[path]?.[got] : undefined;
      if (why) return `${at}${JSON.stringify(got)} cannot work: ${why}`;
      return `${at}must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}${gotText}`;
    }
    case 'invalid_union':
      // Only a value no branch accepts the type of: `gpuMemoryUtilization: half`, an env value that
      // is a list. A number out of range is the number branch's own too_big/too_small, since zod 4
      // reports the one branch that got past its type check instead of the union (handleUnionResults).
      return `${at}${unionWants(issue.errors) ?? 'has the wrong type'}${gotText}`;
    case 'invalid_type':
      if (got === undefined) return `${at}is required (${issue.expected})`;
      // YAML (and --set) read 32 or true as a number or boolean: an argv entry or env value wants text.
      if (issue.expected === 'string' && (typeof got === 'number' || typeof got === 'boolean')) {
        return `${at}must be a string (got ${shown(got)}; quote it: "${String(got)}")`;
      }
      return `${at}must be ${issue.expected}${gotText}`;
    default:
      return `${at}${issue.message}${gotText}`;
  }
}

/**
 * What a union takes, from each branch's own complaint about the value: a type (`number`) or the
 * values it allows (`"auto"`): `must be number or "auto"`. null when a branch says something else.
 */
function unionWants(branches: readonly (readonly z.core.$ZodIssue[])[]): string | null {
  const wants: string[] = [];
  for (const issues of branches) {
    const own = issues.filter((i) => i.path.length === 0);
    if (own.length !== 1) return null;
    const [i] = own;
    if (i.code === 'invalid_type') wants.push(i.expected);
    else if (i.code === 'invalid_value') wants.push(...i.values.map((v) => JSON.stringify(v)));
    else return null;
  }
  const all = [...new Set(wants)];
  if (all.length === 0) return null;
  return `must be ${listWords(all, 'or')}`;
}

function valueAt(input: unknown, path: (string | number)[]): unknown {
  let cur: unknown = input;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

/** `--set workers.0.gpuMemoryUtilization=0.4`: the value is read as a YAML scalar (0.4, true, "auto"). */
export function applySet(obj: Record<string, unknown>, assignment: string): void {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new UserError(`--set ${arg(assignment)}: expected PATH=VALUE, e.g. --set workers.0.gpuMemoryUtilization=0.4`);
  const path = assignment.slice(0, eq).split('.');
  if (path.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype')) {
    throw new UserError(`--set ${arg(assignment)}: ${shown(assignment.slice(0, eq))} is not a valid field path`);
  }
  const index = (list: unknown[], key: string, at: number): number => {
    // A list index is a whole number up to the next free slot: `workers.1` adds a second worker,
    // `workers.999999999` would build a billion-entry list, `workers.-1` used to be ignored.
    const where = path.slice(0, at).join('.');
    if (!/^\d+$/.test(key)) throw new UserError(`--set ${arg(assignment)}: ${where} is a list; ${shown(key)} is not an index (0 to ${list.length})`);
    const n = Number(key);
    if (n > list.length || n > MAX_SET_INDEX) {
      throw new UserError(`--set ${arg(assignment)}: ${where} has ${list.length} entr${list.length === 1 ? 'y' : 'ies'}; index ${key} is past the end (use 0 to ${Math.min(list.length, MAX_SET_INDEX)})`);
    }
    return n;
  };
  let value: unknown;
  try {
    value = parseYamlScalar(assignment.slice(eq + 1));
  } catch {
    value = assignment.slice(eq + 1);
  }
  let cur: Record<string, unknown> | unknown[] = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    const next = Array.isArray(cur) ? cur[index(cur, key, i)] : Object.hasOwn(cur, key) ? cur[key] : undefined;
    if (next === undefined || next === null) {
      const created: Record<string, unknown> | unknown[] = /^\d+$/.test(path[i + 1]) ? [] : {};
      if (Array.isArray(cur)) cur[index(cur, key, i)] = created;
      else cur[key] = created;
      cur = created;
    } else if (typeof next === 'object') {
      cur = next as Record<string, unknown>;
    } else {
      throw new UserError(`--set ${arg(assignment)}: ${shown(path.slice(0, i + 1).join('.'))} is a ${typeof next}, not an object`);
    }
  }
  const last = path[path.length - 1];
  if (Array.isArray(cur)) cur[index(cur, last, path.length - 1)] = value;
  else cur[last] = value;
}
