import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { readBounded } from '../host/files/bounded-read.js';
import { benchIdPattern, benchResultSchema, parseBenchResult, type BenchResult } from '../bench/result.js';
import { writeAtomic } from './atomic-write.js';
import { newRunId } from './paths.js';

// The bench results of a state directory: bench/<id>/result.json, AIPerf's raw exports beside it.
// Ids sort by time like run ids (20261205-141500-123-routing), so a listing needs no reading to order.

export const benchRoot = (stateDir: string) => join(stateDir, 'bench');
export const benchDir = (stateDir: string, id: string) => join(stateDir, 'bench', id);
export const benchResultPath = (stateDir: string, id: string) => join(stateDir, 'bench', id, 'result.json');

/** A new bench id: the time (to the millisecond) and a label (the preset, else the recipes). */
export const newBenchId = (label: string, now = new Date()): string => newRunId(label, now);

/** The most a result.json may take (a real one is tens of KB; a planted 1 GB file must not be read whole). */
const MAX_RESULT_BYTES = 16 * 1024 * 1024;

const isBenchId = (id: string) => benchIdPattern.test(id) && id !== '.' && id !== '..';

function checkBenchId(id: string): void {
  if (!isBenchId(id)) throw new UserError(`"${id}" is not a bench id (ids look like 20261205-141500-123-routing)`, 'dynamo-dev bench list');
}

/**
 * Writes the whole result at once (tmp + rename: a reader never sees half of it), creating
 * bench/<id>/ private to the user. A document the schema refuses is a bug of the writer: thrown,
 * never stored (show would refuse it later).
 */
export async function writeBenchResult(stateDir: string, result: BenchResult): Promise<string> {
  checkBenchId(result.id);
  const checked = benchResultSchema.safeParse(result);
  if (!checked.success) {
    const i = checked.error.issues[0];
    throw new Error(`bench result ${result.id}: ${i.path.map(String).join('.')}: ${i.message} (not stored)`);
  }
  await mkdir(benchDir(stateDir, result.id), { recursive: true, mode: 0o700 });
  const path = benchResultPath(stateDir, result.id);
  await writeAtomic(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

/**
 * A stored result.json, read bounded (src/host/files): never a FIFO (bench show and list hung on
 * one), never a link (a result linked to a secret file showed its first bytes), and its size
 * checked before a byte is read (a 1 GiB file took 590 MB and 4 s). null when it is not there.
 */
async function readText(path: string): Promise<string | null> {
  const r = await readBounded(path, { maxBytes: MAX_RESULT_BYTES });
  if (r.ok) return r.text;
  if (r.why === 'absent') return null;
  throw new UserError(`${path}: ${r.message}; not a bench result`);
}

/** The stored result `id`, validated. A bad id, a missing result or a bad/old file: a UserError (one line, exit 2). */
export async function readBenchResult(stateDir: string, id: string): Promise<BenchResult> {
  checkBenchId(id);
  const path = benchResultPath(stateDir, id);
  const text = await readText(path);
  if (text === null) throw new UserError(`no bench result "${id}" in ${benchRoot(stateDir)}`, 'dynamo-dev bench list');
  const parsed = parseBenchResult(text, id);
  if (!parsed.ok) throw new UserError(`${path}: ${parsed.reason}`);
  return parsed.result;
}

export type BenchListing = { id: string; result: BenchResult; problem: null } | { id: string; result: null; problem: string };

/**
 * Every stored result, newest first, each mapped (by `keep`) as soon as it is read: one result's
 * text at a time, never all of them at once. One that cannot be read is listed with why, never
 * hides the others.
 */
export async function listBenchResults<T = BenchListing>(stateDir: string, keep: (l: BenchListing) => T = (l) => l as T): Promise<T[]> {
  let ids: string[];
  try {
    ids = await readdir(benchRoot(stateDir));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    throw new UserError(`${benchRoot(stateDir)}: cannot read (${code ?? (err as Error).message})`);
  }
  ids = ids.filter(isBenchId).sort().reverse();
  // One at a time: each result is parsed and kept as its (small) document, never every file's text at once.
  const out: T[] = [];
  for (const id of ids) out.push(keep(await listOne(stateDir, id)));
  return out;
}

async function listOne(stateDir: string, id: string): Promise<BenchListing> {
  try {
    const text = await readText(benchResultPath(stateDir, id));
    if (text === null) return { id, result: null, problem: 'no result.json (a bench still running, or one killed before it wrote)' };
    const parsed = parseBenchResult(text, id);
    return parsed.ok ? { id, result: parsed.result, problem: null } : { id, result: null, problem: parsed.reason };
  } catch (err) {
    return { id, result: null, problem: (err as Error).message };
  }
}
