import { afterAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RunWriter } from '../../../src/run/run-writer.js';
import { recordDescendants } from '../../../src/run/descendant-watch.js';
import { newProcessRecord, newRunRecord } from '../../../src/run/run-record.js';
import { realSupervisorDeps } from '../../../src/run/supervisor-deps.js';
import { readStartTicks } from '../../../src/run/proc.js';
import { writeStopRequest } from '../../../src/run/stop-request.js';
import { tempHome } from '../../helpers/cli.js';
import type { DescendantRecord, ProcessRecord, RunRecord } from '../../../src/run/types.js';
import type { Plan, PlannedProcess } from '../../../src/plan/types.js';

// run.json as the supervisor keeps it: what a new run's record holds before anything starts, the
// engines recorded under each process, writes coalesced but never lost or reordered, and the real
// machine the supervisor is given outside tests.

const h = tempHome('dd-keeping-');
afterAll(() => h.cleanup());

const spec: PlannedProcess = {
  name: 'agg-0', role: 'agg', argv: ['python3', '-m', 'dynamo.vllm'], env: { A: '1' }, ports: { system: 8081 }, gpuMemoryUtilization: 0.4, waitFor: [],
  ready: { logPattern: 'x', http: 'http://w/health' }, publishesKvEvents: false, kvTokensEstimate: null,
};
const plan = { recipe: 'agg', model: 'm', frontendUrl: 'http://f', processes: [spec] } as unknown as Plan;

describe('a new run\'s record', () => {
  it('each planned process waits, with no pid, its log in the run\'s logs folder', () => {
    expect(newProcessRecord(spec, '/st', 'r1')).toEqual({
      name: 'agg-0', role: 'agg', pid: null, pgid: null, startTicks: null, startedAt: null,
      argv: ['python3', '-m', 'dynamo.vllm'], env: { A: '1' }, ports: { system: 8081 }, gpuMemoryUtilization: 0.4,
      state: 'waiting', kvTokens: null, exitCode: null, signal: null, log: '/st/runs/r1/logs/agg-0.log', descendants: [],
    });
  });

  it('the run starts as starting, stamped now, with the recipe it runs when given (none when not)', () => {
    const now = new Date('2026-12-01T10:00:00.000Z');
    const procs = [newProcessRecord(spec, '/st', 'r1')];
    const sup = { pid: 11, startTicks: 6, detached: false };
    const rec = newRunRecord({ runId: 'r1', plan, processes: procs, supervisor: sup, now });
    expect(rec).toEqual({
      id: 'r1', recipe: 'agg', model: 'm', createdAt: '2026-12-01T10:00:00.000Z', updatedAt: '2026-12-01T10:00:00.000Z',
      supervisor: sup, bootId: null, state: 'starting', frontendUrl: 'http://f', plan, processes: procs,
    });
    expect(rec.processes).toBe(procs); // the supervisor updates these same objects
    expect(rec).not.toHaveProperty('recipeSpec');
    const withRecipe = newRunRecord({ runId: 'r1', plan, processes: procs, supervisor: sup, now, recipe: { name: 'agg' } as never, bootId: 'b-1' });
    expect(withRecipe).toMatchObject({ recipeSpec: { name: 'agg' }, bootId: 'b-1' });
  });
});

describe('engines recorded under a running process', () => {
  const e = (pid: number, cmd = 'VLLM::EngineCore'): DescendantRecord => ({ pid, startTicks: 5000 + pid, cmd });
  const rec = (o: Partial<ProcessRecord> = {}) => ({ ...newProcessRecord(spec, '/st', 'r1'), pid: 100, ...o });

  it('new ones are added and the change is reported; the same ones again change nothing', () => {
    const r = rec();
    expect(recordDescendants(r, () => [e(150)])).toBe(true);
    expect(r.descendants).toEqual([e(150)]);
    expect(recordDescendants(r, () => [e(150)])).toBe(false);
    expect(r.descendants).toEqual([e(150)]);
  });

  it('a process that never started is not scanned; a scan that fails changes nothing', () => {
    let asked = false;
    expect(recordDescendants(rec({ pid: null }), () => ((asked = true), [e(1)]))).toBe(false);
    expect(asked).toBe(false);
    const r = rec({ descendants: [e(150)] });
    expect(recordDescendants(r, () => {
      throw new Error('EACCES');
    })).toBe(false);
    expect(r.descendants).toEqual([e(150)]);
  });
});

describe('writing run.json while the run changes', () => {
  const record = () => ({ id: 'r1', state: 'starting', updatedAt: 'old' }) as unknown as RunRecord;

  it('a burst of changes is one write, of the record as it is when the write happens; flush waits for it', async () => {
    const rec = record();
    const written: string[] = [];
    const w = new RunWriter(rec, (r) => written.push(r.state), () => {});
    w.persist();
    rec.state = 'ready';
    w.persist();
    w.persist();
    expect(written).toEqual([]);
    await w.flush(); // joins the write already scheduled
    expect(written).toEqual(['ready']);
    w.persist();
    await w.flush();
    expect(written).toEqual(['ready', 'ready']);
  });

  it('writeNow writes at once, stamped with the time of the write', () => {
    const rec = record();
    const stamps: string[] = [];
    new RunWriter(rec, (r) => stamps.push(r.updatedAt), () => {}).writeNow();
    expect(stamps).toHaveLength(1);
    expect(Math.abs(Date.parse(stamps[0]) - Date.now())).toBeLessThan(5000);
  });

  it('a write that fails is a warning naming run.json and the reason; the next write is still made', async () => {
    const rec = record();
    const warnings: string[] = [];
    let fail = true;
    const written: string[] = [];
    const w = new RunWriter(rec, (r) => {
      if (fail) throw new Error('ENOSPC: no space left on device');
      written.push(r.state);
    }, (m) => warnings.push(m));
    w.writeNow();
    expect(warnings).toEqual(['cannot write run.json: ENOSPC: no space left on device']);
    fail = false;
    w.persist();
    await w.flush();
    expect(written).toEqual(['starting']);
  });
});

describe('the real machine the supervisor gets', () => {
  it('is this process, on this boot; makes folders; finds no marked process for an unused marker; reads teardown\'s note', async () => {
    const d = realSupervisorDeps();
    expect(d.self.pid).toBe(process.pid);
    expect(d.self.startTicks).toBe(readStartTicks(process.pid));
    expect(d.self.bootId).toMatch(/^[0-9a-f-]{36}$/);
    const dir = join(h.dir, 'a', 'b', 'discovery');
    d.mkdirs(dir);
    expect(existsSync(dir)).toBe(true);
    expect(await d.marked(join(h.dir, 'no-run-uses-this'), 0)).toEqual([]);
    expect(await d.lockHolders(join(h.dir, 'nobody-holds.lock'))).toEqual([]);
    const stateDir = join(h.dir, 'state');
    d.mkdirs(join(stateDir, 'runs', 'r1'));
    expect(d.stopRequest(stateDir, 'r1')).toBeNull();
    writeStopRequest(stateDir, 'r1', { pid: 4321, command: 'dynamo-dev teardown' });
    expect(d.stopRequest(stateDir, 'r1')).toBe('pid 4321');
  });

  it('its stop is the real stop loop: nothing to stop is done at once', async () => {
    const d = realSupervisorDeps();
    const r = await d.stop([], { graceMs: 100 }).done;
    expect(r).toEqual({ stopped: [], remaining: [] });
  });
});

describe('teardown\'s note to a foreground up', () => {
  it('names the teardown\'s pid; a note without a pid still says teardown; no note or a bad one says nothing', async () => {
    const { writeFileSync, mkdirSync, readFileSync } = await import('node:fs');
    const { readStopRequest } = await import('../../../src/run/stop-request.js');
    const stateDir = join(h.dir, 'notes');
    mkdirSync(join(stateDir, 'runs', 'r1'), { recursive: true });
    expect(readStopRequest(stateDir, 'r1')).toBeNull();
    const before = Date.now();
    writeStopRequest(stateDir, 'r1', { pid: 77, command: 'dynamo-dev teardown' });
    const note = JSON.parse(readFileSync(join(stateDir, 'runs', 'r1', 'stop-request.json'), 'utf8'));
    expect(note).toMatchObject({ pid: 77, command: 'dynamo-dev teardown' });
    expect(Date.parse(note.at)).toBeGreaterThanOrEqual(before - 1000);
    expect(readStopRequest(stateDir, 'r1')).toBe('pid 77');
    writeFileSync(join(stateDir, 'runs', 'r1', 'stop-request.json'), '{"command":"x"}');
    expect(readStopRequest(stateDir, 'r1')).toBe('teardown');
    writeFileSync(join(stateDir, 'runs', 'r1', 'stop-request.json'), 'not json');
    expect(readStopRequest(stateDir, 'r1')).toBeNull();
    // A run folder that is gone: the note is simply not written (only the wording depended on it).
    expect(() => writeStopRequest(stateDir, 'gone', { pid: 1, command: 'x' })).not.toThrow();
  });
});
