import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { buildRunStatus } from '../../../src/run/status-doc.js';
import { stopOrphaned } from '../../../src/run/state.js';
import { formatRunTable } from '../../../src/ui/status-table.js';
import type { RunLiveness } from '../../../src/run/liveness.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';
import { frontendGone, recordedProcess, stoppingRecord } from '../../helpers/stopping-run.js';

// A run whose supervisor began stopping it (record `stopping`, SIGTERM sent, the frontend already
// ended) and then died (SIGKILL, OOM): state `orphaned`. Its workers still run, but their stop
// began and nothing stops them now: their rows say READY no, STATE orphaned, and the lines under
// the table say so and name the teardown; the frontend that stop ended is no loss. The JSON keeps
// every field as it was and adds `orphanedStop`.

chalk.level = 0;

const proc = (name: string, pid: number, o: Partial<ProcessRecord> = {}): ProcessRecord => recordedProcess(name, pid, { kvTokens: 14_778, ...o });
const record = (o: Partial<RunRecord> = {}): RunRecord => stoppingRecord({
  stopKillAt: '2026-12-02T01:06:00.000Z',
  processes: [proc('frontend', 100, { state: 'stopped', exitCode: 0, endedAt: '2026-12-02T01:05:00.500Z' }), proc('agg-0', 101), proc('agg-1', 102)],
  ...o,
});
/** The supervisor dead, the frontend ended by the stop, both workers running (they ignore SIGTERM). */
const cutShort = (o: Partial<RunLiveness> = {}): RunLiveness => frontendGone(false, o);
const now = Date.parse('2026-12-02T01:05:03.000Z');
const cells = (text: string) => text.split('\n').filter((l) => /^ {2}(frontend|agg-\d) /.test(l)).map((l) => l.trim().split(/\s{2,}/).slice(0, 5));

describe('stopOrphaned: a stop began, its supervisor is dead, something still runs', () => {
  it.each([
    [false, true, 'stopping', true],
    [true, true, 'stopping', false], // a live supervisor stops it: beingStopped
    [false, false, 'stopping', false], // nothing runs: stopped
    [false, true, 'ready', false], // a plain orphan: its processes may still serve
    [false, true, 'stopped', false],
  ] as const)('supervisor %s, processes %s, record %s -> %s', (supervisor, processes, state, want) => {
    expect(stopOrphaned(record({ state }), { supervisor, processes })).toBe(want);
  });
});

describe('the status of a run whose stop was cut short', () => {
  const doc = buildRunStatus(record(), cutShort(), '/st', now);

  it('JSON: state orphaned, no `stopping` (nothing stops it), orphanedStop names what still runs; its workers not ready (READY no)', () => {
    expect([doc.state, doc.live, doc.stopping]).toEqual(['orphaned', true, null]);
    expect(doc.orphanedStop).toEqual({ supervisorPid: 50, running: ['agg-0', 'agg-1'] });
    // They had SIGTERM: ready false, as the table's READY column; alive and their recorded state as before.
    expect(doc.processes.map((p) => [p.name, p.alive, p.ready, p.state])).toEqual([
      ['frontend', false, false, 'stopped'], ['agg-0', true, false, 'ready'], ['agg-1', true, false, 'ready'],
    ]);
    expect(cells(formatRunTable(doc, { now })).map((r) => r[3] === 'yes')).toEqual(doc.processes.map((p) => p.ready));
    // A live supervisor stopping it, a plain orphan, or nothing left: none.
    expect(buildRunStatus(record(), cutShort({ supervisor: true }), '/st', now).orphanedStop).toBeNull();
    expect(buildRunStatus(record({ state: 'ready' }), cutShort(), '/st', now).orphanedStop).toBeNull();
    const over = cutShort({ processes: false, perProcess: cutShort().perProcess.map((p) => ({ ...p, alive: false, pids: [] })) });
    expect(buildRunStatus(record(), over, '/st', now).orphanedStop).toBeNull();
  });

  it('what is left of a worker whose leader ended (its engine core) still runs: named by what is left', () => {
    const l = cutShort({ perProcess: [cutShort().perProcess[0], { name: 'agg-0', alive: false, recycled: false, pids: [201] }, cutShort().perProcess[2]] });
    const d = buildRunStatus(record(), l, '/st', now);
    expect(d.orphanedStop?.running).toEqual(['agg-0', 'agg-1']);
    expect(formatRunTable(d, { now })).toContain('agg-0 (pid 201), agg-1 (pid 102) still running');
  });

  it('table: the workers read READY no, STATE orphaned; the frontend keeps stopped', () => {
    expect(cells(formatRunTable(doc, { now }))).toEqual([
      ['frontend', '100', 'no', 'no', 'stopped'],
      ['agg-0', '101', 'yes', 'no', 'orphaned'],
      ['agg-1', '102', 'yes', 'no', 'orphaned'],
    ]);
    // A plain orphan (its supervisor died while it served): its rows read as their records say.
    const plain = buildRunStatus(record({ state: 'ready', processes: [proc('frontend', 100), proc('agg-0', 101), proc('agg-1', 102)] }), cutShort({
      perProcess: cutShort().perProcess.map((p) => ({ ...p, alive: true, pids: [p.name === 'frontend' ? 100 : p.pids[0]] })),
    }), '/st', now);
    expect(cells(formatRunTable(plain, { now })).map((r) => r.slice(3))).toEqual([['yes', 'ready'], ['yes', 'ready'], ['yes', 'ready']]);
    expect(plain.processes.map((p) => p.ready)).toEqual([true, true, true]);
  });

  it('first line: orphaned and how much still runs, no URL (its frontend ended); under the table: why, what, and the teardown', () => {
    const lines = formatRunTable(doc, { now }).split('\n');
    expect(lines[0]).toBe('run r  agg-router  orphaned (stop cut short: 2 of 3 processes still running)  m');
    expect(lines).toContain('  ! its supervisor (pid 50) died while stopping it; agg-0 (pid 101), agg-1 (pid 102) still running and nothing stops them; stop them with:');
    expect(lines).toContain('    dynamo-dev teardown --run r');
    // The frontend that stop ended is no loss: no "! frontend exited with code 0", no second "end the run".
    expect(lines.join('\n')).not.toMatch(/frontend exited|end the run/);
    // Its frontend ignoring SIGTERM too: still answering, so its URL stays.
    const fe = buildRunStatus(record({ processes: [proc('frontend', 100), proc('agg-0', 101)] }), cutShort({
      pids: [100, 101], perProcess: [{ name: 'frontend', alive: true, recycled: false, pids: [100] }, { name: 'agg-0', alive: true, recycled: false, pids: [101] }],
    }), '/st', now);
    expect(formatRunTable(fe, { now }).split('\n')[0]).toBe('run r  agg-router  orphaned (stop cut short: 2 of 2 processes still running)  http://f  m');
    expect(formatRunTable(fe, { now })).toContain('frontend (pid 100), agg-0 (pid 101) still running and nothing stops them');
  });

  it('one process left: it, not them', () => {
    const one = cutShort({ pids: [101], perProcess: [cutShort().perProcess[0], cutShort().perProcess[1], { name: 'agg-1', alive: false, recycled: false, pids: [] }] });
    const text = formatRunTable(buildRunStatus(record(), one, '/st', now), { now });
    expect(text).toContain('agg-0 (pid 101) still running and nothing stops it; stop it with:');
  });

  it('a worker killed before the stop is still a loss it says', () => {
    const rec = record({ processes: [proc('frontend', 100, { state: 'stopped', exitCode: 0 }), proc('agg-0', 101, { state: 'failed', signal: 'SIGKILL', endedAt: '2026-12-02T01:04:00.000Z' }), proc('agg-1', 102)] });
    const l = cutShort({ perProcess: [cutShort().perProcess[0], { name: 'agg-0', alive: false, recycled: false, pids: [] }, cutShort().perProcess[2]] });
    const text = formatRunTable(buildRunStatus(rec, l, '/st', now), { now });
    expect(text).toContain('! agg-0 was killed by SIGKILL');
    expect(text).not.toMatch(/frontend exited|end the run/);
  });

  it.each([40, 80, 120])('wraps at %i columns: nothing wider, every word of the lines under the table kept', (w) => {
    const lines = formatRunTable(doc, { now, columns: w }).trimEnd().split('\n');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(w);
    const words = (s: string) => s.split(/\s+/).filter(Boolean);
    const at = lines.findIndex((l) => l.startsWith('  ! its supervisor'));
    const end = lines.indexOf('    dynamo-dev teardown --run r');
    expect(words(lines.slice(at, end).join(' '))).toEqual(words('! its supervisor (pid 50) died while stopping it; agg-0 (pid 101), agg-1 (pid 102) still running and nothing stops them; stop them with:'));
  });
});
