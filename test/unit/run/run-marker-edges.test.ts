import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { findMarked, livenessIn, markerFor, type MarkerReader, type RunsScan } from '../../../src/run/run-scan.js';
import type { ProcStat } from '../../../src/run/proc.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';
import { tempHome } from '../../helpers/cli.js';

// Finding a run's processes by the marker in their environment, at the edges: a process started in
// the very tick the run began, ourselves, an unreadable environment, a state dir reached through a
// symlink; and a record judged against processes of another user or of another boot.

const h = tempHome('dd-marker-');
afterAll(() => h.cleanup());

const st = (pid: number, startTicks: number, pgid = pid): ProcStat => ({ pid, comm: 'x', state: 'S', ppid: 1, pgid, session: pid, startTicks });

describe('who carries the run marker', () => {
  const env: Record<number, string | null> = { 100: 'DYNAMO_DEV_RUN=/s/runs/r1\0', 200: 'DYNAMO_DEV_RUN=/s/runs/r1\0', 300: null };
  const reader: MarkerReader = { uidOf: () => 1000, environ: (pid) => env[pid] ?? null };
  const q = { uid: 1000, minTicks: 500, known: new Set<number>(), wanted: new Set(['/s/runs/r1']), selfPid: 200 };

  it('a process started in the very tick the run began is the run\'s; one a tick earlier is not', () => {
    expect([...findMarked([st(100, 500)], q, reader).keys()]).toEqual([100]);
    expect([...findMarked([st(100, 499)], q, reader).keys()]).toEqual([]);
  });

  it('never ourselves (a foreground up carries the marker of the run it starts), never an unreadable environment', () => {
    expect([...findMarked([st(200, 600), st(300, 600)], q, reader).keys()]).toEqual([]);
  });
});

describe('the marker value of a run', () => {
  it('is the run folder under the real path of the state dir, however it was spelt; as spelt while it does not exist', () => {
    const real = join(h.dir, 'real-state');
    mkdirSync(real);
    const link = join(h.dir, 'link-state');
    symlinkSync(real, link);
    expect(markerFor(link, 'r1')).toBe(join(real, 'runs', 'r1'));
    expect(markerFor(join(h.dir, 'not-yet'), 'r1')).toBe(join(h.dir, 'not-yet', 'runs', 'r1'));
  });
});

describe('a record judged on one scan', () => {
  const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
    name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 1000, startedAt: null, argv: [], env: {}, ports: {}, gpuMemoryUtilization: null,
    state: 'ready', kvTokens: null, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
  });
  const rec = (o: Partial<RunRecord> = {}): RunRecord => ({
    id: 'r1', state: 'ready', supervisor: { pid: 50, startTicks: 40, detached: false }, processes: [proc({})], bootId: 'boot-a', ...o,
  } as RunRecord);
  const rs = (o: Partial<RunsScan> = {}): RunsScan => ({
    scan: [st(50, 40), st(100, 1000), st(101, 1010, 100)], bootId: 'boot-a', marks: new Map(), ours: () => true, ...o,
  });

  it('all of it ours and this boot: supervisor and processes alive', () => {
    expect(livenessIn('/s', rec(), rs())).toMatchObject({ supervisor: true, processes: true, pids: [50, 100, 101] });
  });

  it('a record from another boot names nothing alive, whatever pids happen to match', () => {
    expect(livenessIn('/s', rec({ bootId: 'boot-b' }), rs())).toMatchObject({ supervisor: false, processes: false, pids: [] });
  });

  it('processes of another user are never the run\'s: not its supervisor, not its members', () => {
    const l = livenessIn('/s', rec(), rs({ ours: (pid) => pid !== 101 && pid !== 50 }));
    expect(l).toMatchObject({ supervisor: false, pids: [100] });
  });

  it('the marked processes of this run (and only of this run) are added', () => {
    const scan = [st(50, 40), st(100, 1000), st(400, 2000), st(401, 2000)];
    const marks = new Map([[400, join('/s', 'runs', 'r1')], [401, join('/s', 'runs', 'other')]]);
    expect(livenessIn('/s', rec(), rs({ scan, marks })).marked).toEqual([400]);
  });
});
