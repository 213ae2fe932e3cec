import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';
import { parseBenchResult, type BenchResult } from '../../../src/bench/result.js';
import { benchResultPath, listBenchResults, newBenchId, readBenchResult, writeBenchResult } from '../../../src/run/bench-store.js';
import { isUserError } from '../../../src/errors.js';

const STORED = join(FIXTURES, 'bench', 'state');
const ROUTING = '20261205-101500-000-routing';
const fixture = (id: string): BenchResult => JSON.parse(readFileSync(join(STORED, 'bench', id, 'result.json'), 'utf8'));

const dirs: string[] = [];
const tempState = () => {
  const d = mkdtempSync(join(tmpdir(), 'dd-bench-store-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('parseBenchResult', () => {
  it('accepts every stored fixture (the shapes bench writes)', () => {
    for (const id of readdirSync(join(STORED, 'bench'))) {
      const r = parseBenchResult(readFileSync(join(STORED, 'bench', id, 'result.json'), 'utf8'), id);
      expect(r.ok, JSON.stringify(r)).toBe(true);
    }
  });

  it('names the field that is wrong', () => {
    const doc = fixture(ROUTING) as any;
    doc.variants[1].runs[0].metrics.ttftP50Ms = -1;
    expect(parseBenchResult(JSON.stringify(doc))).toEqual({ ok: false, reason: expect.stringMatching(/^variants\.1\.runs\.0\.metrics\.ttftP50Ms: /) });
    doc.variants[1].runs[0].metrics.ttftP50Ms = 3;
    doc.variants[0].status = 'great';
    expect(parseBenchResult(JSON.stringify(doc))).toMatchObject({ ok: false, reason: expect.stringMatching(/^variants\.0\.status: /) });
  });

  it('says which version it reads when the document is older or newer, and when it is not JSON', () => {
    const doc = fixture(ROUTING) as any;
    expect(parseBenchResult(JSON.stringify({ ...doc, schemaVersion: 2 }))).toEqual({ ok: false, reason: 'schemaVersion 2; this dynamo-dev reads schemaVersion 1' });
    const { schemaVersion: _, ...old } = doc;
    expect(parseBenchResult(JSON.stringify(old))).toEqual({ ok: false, reason: 'no schemaVersion; this dynamo-dev reads schemaVersion 1' });
    expect(parseBenchResult('{"schemaVersion": 1,')).toMatchObject({ ok: false, reason: expect.stringMatching(/^not JSON/) });
    expect(parseBenchResult('null')).toMatchObject({ ok: false, reason: expect.stringMatching(/^the document: /) });
  });

  it('keeps fields a newer writer adds (loose), and refuses an id that is not its folder\'s', () => {
    const doc = { ...fixture(ROUTING), addedLater: { x: 1 } };
    const r = parseBenchResult(JSON.stringify(doc), ROUTING);
    expect(r.ok && (r.result as any).addedLater).toEqual({ x: 1 });
    expect(parseBenchResult(JSON.stringify(doc), 'other')).toEqual({ ok: false, reason: `its id "${ROUTING}" is not its folder's` });
  });
});

describe('the bench store', () => {
  it('writes a result whole under bench/<id>/ (private) and reads it back identical', async () => {
    const state = tempState();
    const doc = fixture(ROUTING);
    const path = await writeBenchResult(state, doc);
    expect(path).toBe(benchResultPath(state, ROUTING));
    expect(statSync(join(state, 'bench', ROUTING)).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(state, 'bench', ROUTING))).toEqual(['result.json']); // no tmp file left
    expect(await readBenchResult(state, ROUTING)).toEqual(doc);
  });

  it('never stores a document the schema refuses', async () => {
    const state = tempState();
    const bad = { ...fixture(ROUTING), requests: 0 };
    await expect(writeBenchResult(state, bad)).rejects.toThrow(/requests: .* \(not stored\)/);
  });

  it('a bad id, a missing result and a bad file are one-line input errors (exit 2)', async () => {
    const state = tempState();
    const err = async (p: Promise<unknown>) => p.then(() => null, (e) => e);
    const badId = await err(readBenchResult(state, '../runs'));
    expect(isUserError(badId)).toBe(true);
    expect(badId.message).toBe('"../runs" is not a bench id (ids look like 20261205-141500-123-routing)');
    const missing = await err(readBenchResult(state, 'nope'));
    expect(isUserError(missing) && missing.message).toBe(`no bench result "nope" in ${join(state, 'bench')}`);
    mkdirSync(join(state, 'bench', 'old'), { recursive: true });
    writeFileSync(join(state, 'bench', 'old', 'result.json'), '{"id":"old"}');
    const old = await err(readBenchResult(state, 'old'));
    expect(isUserError(old) && old.message).toBe(`${join(state, 'bench', 'old', 'result.json')}: no schemaVersion; this dynamo-dev reads schemaVersion 1`);
  });

  it('lists newest first; an unreadable result is listed with why and hides no other', async () => {
    const state = tempState();
    expect(await listBenchResults(state)).toEqual([]);
    cpSync(STORED, state, { recursive: true });
    mkdirSync(join(state, 'bench', '20261205-130000-000-killed'));
    const list = await listBenchResults(state);
    expect(list.map((l) => l.id)).toEqual(['20261205-130000-000-killed', '20261205-120000-000-agg-agg-router-mocker', '20261205-110200-000-agg-vs-disagg', ROUTING]);
    expect(list[0]).toMatchObject({ result: null, problem: expect.stringMatching(/^no result.json/) });
    expect(list[3].result?.preset).toBe('routing');
  });

  it('bench ids sort by time, like run ids', () => {
    const a = newBenchId('routing', new Date(2026, 11, 5, 9, 5, 3, 7));
    const b = newBenchId('agg agg-router', new Date(2026, 11, 5, 10, 0, 0, 0));
    expect(a).toBe('20261205-090503-007-routing');
    expect(b).toBe('20261205-100000-000-agg-agg-router');
    expect([b, a].sort()).toEqual([a, b]);
  });
});
