import { z } from 'zod';
import type { RunRecord } from './types.js';
import { jsonErrorWithoutText, MAX_JSON_DEPTH, nestsDeeperThan } from '../host/net/http-body.js';

// run.json as read back: every field status, teardown and doctor act on is checked before anyone
// acts on it (a record names processes to signal and files to read). Loose objects: fields added
// by newer versions pass through. A pid or pgid is a process we could signal: never 0 or 1.

const pid = z.number().int().min(2).max(2 ** 22);
const ticks = z.number().int().min(0);
const name = z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, 'is not a process name');

const descendant = z.looseObject({ pid, startTicks: ticks.nullable(), cmd: z.string() });

const processRecord = z.looseObject({
  name,
  role: z.enum(['frontend', 'agg', 'prefill', 'decode']),
  pid: pid.nullable(),
  pgid: pid.nullable(),
  startTicks: ticks.nullable(),
  startedAt: z.string().nullable(),
  argv: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  ports: z.record(z.string(), z.number().int().min(1).max(65535)),
  gpuMemoryUtilization: z.number().nullable(),
  state: z.enum(['waiting', 'starting', 'loading', 'kv-allocated', 'ready', 'exited', 'failed', 'stopped', 'gone']),
  kvTokens: z.number().int().min(0).nullable(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  log: z.string(),
  descendants: z.array(descendant).max(4096).default([]),
  // How it ended (src/run/losses.ts): shown, never acted on.
  endedAt: z.string().nullable().optional(),
  noticedGoneAt: z.string().nullable().optional(),
  diagnosis: z.looseObject({ code: z.string(), title: z.string(), text: z.string(), file: z.string(), line: z.number().int() }).nullable().optional(),
});

// A pid a stop gave up on: signalled again only while its start ticks match.
const survivor = z.looseObject({ name: z.string().max(256), pid, startTicks: ticks, cmd: z.string(), at: z.string() });

export const runRecordSchema = z.looseObject({
  id: z.string().regex(/^[\w.-]+$/, 'is not a run id'),
  recipe: z.string(),
  model: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  supervisor: z.looseObject({ pid, startTicks: ticks.nullable(), detached: z.boolean() }),
  bootId: z.string().nullable().optional(),
  state: z.enum(['starting', 'ready', 'degraded', 'stopping', 'stopped', 'failed']),
  stopKillAt: z.string().nullable().optional(),
  frontendUrl: z.string(),
  plan: z.looseObject({}),
  processes: z.array(processRecord).max(256),
  survivors: z.array(survivor).max(4096).optional(),
});

/**
 * Pure: the record in `text` (the run.json of runs/<dirId>/), or why it cannot be trusted. Its id
 * must be its folder's. The log of each process is where the reader's state dir keeps it
 * (`logPathOf`), whatever path the record holds: a record naming /dev/zero or another user's file
 * must not make `logs` read it.
 */
export function parseRunRecord(text: string, dirId: string, logPathOf: (name: string) => string): { ok: true; record: RunRecord } | { ok: false; reason: string } {
  // Never the record's bytes in the reason: a run.json someone linked to a secret file (or wrote
  // to look like one) must not print it; nested past any record's depth is refused before zod recurses.
  if (nestsDeeperThan(text)) return { ok: false, reason: `nested deeper than ${MAX_JSON_DEPTH} levels; a run record never is` };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON (${jsonErrorWithoutText((err as Error).message)})` };
  }
  const r = runRecordSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    return { ok: false, reason: `${i.path.map(String).join('.') || 'the record'}: ${i.message}` };
  }
  const rec = r.data as unknown as RunRecord;
  if (rec.id !== dirId) return { ok: false, reason: `its id ${JSON.stringify(rec.id)} is not its folder's` };
  return { ok: true, record: { ...rec, processes: rec.processes.map((p) => ({ ...p, log: logPathOf(p.name) })) } };
}
