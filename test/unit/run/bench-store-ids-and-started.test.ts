import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../../src/errors.js';
import { benchResultPath, listBenchResults, readBenchResult, writeBenchResult } from '../../../src/run/bench-store.js';
import { startedFrom, type BenchDoc } from '../../../src/run/bench.js';
import { plannedWorkerNames } from '../../../src/run/bench-facts.js';
import type { BenchResult } from '../../../src/bench/result.js';
import type { Plan } from '../../../src/plan/types.js';

// run/bench-store.ts (which ids are bench ids, what a listing skips and in which order, a bench
// folder that cannot be read), run/bench.ts startedFrom (the run id from whichever event names it,
// the first failure kept) and run/bench-facts.ts plannedWorkerNames (issue 30).

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const stateDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'dd-bench-store-'));
  dirs.push(d);
  return d;
};

const doc = (id: string): BenchDoc => ({
  schemaVersion: 1, id, startedAt: '2026-12-05T14:00:00.000Z', endedAt: '2026-12-05T14:10:00.000Z', argv: ['bench'], preset: null,
  seed: 0, requests: 8, concurrency: [1], repeats: 1, interrupted: false, isolation: 'fresh-prefixes',
  machine: { gpu: null, driver: null, cudaDriver: null, dynamo: '1.6.1', vllm: null, aiperf: '0.13.0', python: 'python3' },
  load: { inputTokens: 32, outputTokens: 16, prefixes: null }, variants: [],
});

async function refused(p: Promise<unknown>): Promise<UserError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(UserError);
  return err as UserError;
}

describe('bench ids', () => {
  it.each(['.', '..'])('"%s" is no bench id: refused as such (never read as bench/%s/result.json), with the way to list them', async (id) => {
    const e = await refused(readBenchResult(stateDir(), id));
    expect(e.message).toBe(`"${id}" is not a bench id (ids look like 20261205-141500-123-routing)`);
    expect(e.fix).toBe('dynamo-dev bench list');
  });

  it('a well-formed id with no result: "no bench result", with the way to list them', async () => {
    const dir = stateDir();
    const e = await refused(readBenchResult(dir, '20261205-141500-123-routing'));
    expect(e.message).toBe(`no bench result "20261205-141500-123-routing" in ${join(dir, 'bench')}`);
    expect(e.fix).toBe('dynamo-dev bench list');
  });

  it('a result.json that is a link: refused as not a bench result, naming the file', async () => {
    const dir = stateDir();
    const id = '20261205-141500-123-a';
    mkdirSync(join(dir, 'bench', id), { recursive: true });
    writeFileSync(join(dir, 'secret'), 'token=abc\n');
    symlinkSync(join(dir, 'secret'), benchResultPath(dir, id));
    const e = await refused(readBenchResult(dir, id));
    expect(e.message.startsWith(`${benchResultPath(dir, id)}: `)).toBe(true);
    expect(e.message.endsWith('; not a bench result')).toBe(true);
    expect(e.message).not.toContain('token=abc');
  });

  it('a document the schema refuses is not stored, the bad field named by its whole path', async () => {
    const dir = stateDir();
    const bad = { ...doc('20261205-141500-123-a'), variants: [{ name: 'a' }] } as unknown as BenchResult;
    const err = await writeBenchResult(dir, bad).then(() => null, (e: unknown) => e as Error);
    expect(err?.message).toMatch(/^bench result 20261205-141500-123-a: variants\.0\.\w+: .* \(not stored\)$/);
    const listed = await listBenchResults(dir);
    expect(listed).toEqual([]);
  });
});

describe('listBenchResults', () => {
  it('newest first, whatever order they were written in; a folder whose name is no bench id is not listed', async () => {
    const dir = stateDir();
    const ids = ['20261205-141500-200-b', '20261205-141500-100-a', '20261207-090000-000-d', '20261206-120000-000-c'];
    for (const id of ids) await writeBenchResult(dir, doc(id));
    mkdirSync(join(dir, 'bench', 'not an id'));
    const listed = await listBenchResults(dir, (l) => `${l.id}:${l.problem === null ? 'ok' : l.problem}`);
    expect(listed).toEqual([
      '20261207-090000-000-d:ok', '20261206-120000-000-c:ok', '20261205-141500-200-b:ok', '20261205-141500-100-a:ok',
    ]);
  });

  it('no bench folder yet: an empty list', async () => {
    expect(await listBenchResults(stateDir())).toEqual([]);
  });

  it('a bench folder that is not a folder: one line naming it and why, not an empty list', async () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'bench'), 'x');
    const e = await refused(listBenchResults(dir));
    expect(e.message).toBe(`${join(dir, 'bench')}: cannot read (ENOTDIR)`);
  });
});

const plan = {
  recipe: 'mocker', engine: 'mocker', model: 'M', router: { mode: 'kv', kvEvents: true },
  processes: [
    { name: 'prefill-0', role: 'prefill', argv: [] },
    { name: 'frontend', role: 'frontend', argv: [], ports: { http: 18000 } },
    { name: 'decode-0', role: 'decode', argv: ['--num-workers', '2'] },
  ],
} as unknown as Plan;

describe('plannedWorkerNames', () => {
  it('every process but the frontend, in plan order, and the count the frontend should see', () => {
    expect(plannedWorkerNames(plan)).toEqual({ names: ['prefill-0', 'decode-0'], count: 3 });
  });
});

describe('startedFrom: the run id from whichever event names it', () => {
  const failed = (reason: string, process: string | null = null) => ({ event: 'failed' as const, reason, process, diagnosis: null, hint: null, lastLines: [], log: null });

  it('a plan with no run id yet, then the run event: the run\'s id', () => {
    const s = startedFrom([{ event: 'plan', runId: null, plan }, { event: 'run', runId: 'r-run', logsDir: '/x' }], 0);
    expect(s).toMatchObject({ code: 0, runId: 'r-run', plan });
  });

  it('the ready event names the run', () => {
    const s = startedFrom([{ event: 'plan', runId: null, plan }, { event: 'ready', runId: 'r-ready' } as never], 0);
    expect(s.runId).toBe('r-ready');
  });

  it('the first failure is the reason; later ones (the stops that follow it) do not replace it', () => {
    const s = startedFrom([failed('exited with code 1', 'agg-0'), failed('stopped after agg-0 failed', 'frontend')], 1);
    expect(s.failed).toBe('agg-0: exited with code 1');
  });

  it('a stopped run named only by its stopped event; a stopped event after the run event does not rename it', () => {
    const stopped = (runId: string) => ({ event: 'stopped', runId, reason: 'failure', stopped: [], remaining: [] }) as never;
    expect(startedFrom([stopped('r-stopped')], 1).runId).toBe('r-stopped');
    expect(startedFrom([{ event: 'run', runId: 'r-1', logsDir: '/x' }, stopped('r-2')], 1).runId).toBe('r-1');
  });

  it('a preflight failure with no failing check listed: the reason as up said it, nothing appended', () => {
    const s = startedFrom([
      { event: 'preflight', ok: false, checks: [{ id: 'gpu.driver', title: 't', status: 'pass', summary: 'ok', details: [], fix: null }] },
      failed('preflight: hf.locks failed; nothing was started'),
    ], 1);
    expect(s.failed).toBe('preflight: hf.locks failed; nothing was started');
  });
});
