import { parseDocument, parse as parseYamlScalar } from 'yaml';
import type { z } from 'zod';
import { UserError } from '../errors.js';
import { recipeSchema, type Recipe } from './schema.js';

/** Parses, overrides and validates recipe text. Pure: the caller reads the file. */
export function parseRecipe(text: string, source: string, sets: string[] = []): Recipe {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const line = e.linePos?.[0]?.line;
    throw new UserError(`${source}${line ? `:${line}` : ''}: invalid YAML: ${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  const raw: unknown = doc.toJS();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new UserError(`${source}: a recipe is a YAML mapping (name:, workers:, ...), got ${raw === null ? 'nothing' : Array.isArray(raw) ? 'a list' : typeof raw}`);
  }
  const obj = raw as Record<string, unknown>;
  for (const s of sets) applySet(obj, s);
  return validateRecipe(obj, source);
}

export function validateRecipe(obj: unknown, source: string): Recipe {
  const r = recipeSchema.safeParse(obj);
  if (!r.success) throw new UserError(`${source}: ${formatIssue(r.error.issues[0], obj)}`);
  return r.data;
}

/** One line naming the field and what would be valid. */
export function formatIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const path = issue.path.map(String).join('.');
  const at = path ? `${path}: ` : '';
  const got = valueAt(input, issue.path as (string | number)[]);
  const gotText = got === undefined ? '' : ` (got ${JSON.stringify(got)})`;
  switch (issue.code) {
    case 'unrecognized_keys': {
      const where = path ? `${path}.` : '';
      return `unknown field ${issue.keys.map((k) => `"${where}${k}"`).join(', ')}; see docs/recipes.md for the fields a recipe takes`;
    }
    case 'too_big':
    case 'too_small': {
      const lo = issue.code === 'too_small' ? `${issue.inclusive ? '>=' : '>'} ${String(issue.minimum)}` : null;
      const hi = issue.code === 'too_big' ? `${issue.inclusive ? '<=' : '<'} ${String(issue.maximum)}` : null;
      if (issue.message.startsWith('must ')) return `${at}${issue.message}${gotText}`;
      return `${at}must be ${lo ?? hi}${gotText}`;
    }
    case 'invalid_value':
      return `${at}must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}${gotText}`;
    case 'invalid_union': {
      // A fraction: the number branch says why (range), the literal branch says "auto".
      const inner = issue.errors.flat().find((i) => i.code === 'too_big' || i.code === 'too_small');
      if (inner?.message.startsWith('must ')) return `${at}${inner.message}${gotText}`;
      return `${at}has the wrong type${gotText}`;
    }
    case 'invalid_type':
      return got === undefined ? `${at}is required (${issue.expected})` : `${at}must be ${issue.expected}${gotText}`;
    default:
      return `${at}${issue.message}${gotText}`;
  }
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
  if (eq <= 0) throw new UserError(`--set ${assignment}: expected PATH=VALUE, e.g. --set workers.0.gpuMemoryUtilization=0.4`);
  const path = assignment.slice(0, eq).split('.');
  if (path.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype')) {
    throw new UserError(`--set ${assignment}: "${assignment.slice(0, eq)}" is not a valid field path`);
  }
  let value: unknown;
  try {
    value = parseYamlScalar(assignment.slice(eq + 1));
  } catch {
    value = assignment.slice(eq + 1);
  }
  let cur: Record<string, unknown> | unknown[] = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    const next = Array.isArray(cur) ? cur[Number(key)] : cur[key];
    if (next === undefined || next === null) {
      const created: Record<string, unknown> | unknown[] = /^\d+$/.test(path[i + 1]) ? [] : {};
      if (Array.isArray(cur)) cur[Number(key)] = created;
      else cur[key] = created;
      cur = created;
    } else if (typeof next === 'object') {
      cur = next as Record<string, unknown>;
    } else {
      throw new UserError(`--set ${assignment}: "${path.slice(0, i + 1).join('.')}" is a ${typeof next}, not an object`);
    }
  }
  const last = path[path.length - 1];
  if (Array.isArray(cur)) {
    if (!/^\d+$/.test(last)) throw new UserError(`--set ${assignment}: "${last}" must be a list index`);
    cur[Number(last)] = value;
  } else cur[last] = value;
}
