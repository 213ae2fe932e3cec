import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { buildRunStatus } from '../../../src/run/status-doc.js';
import { beingStopped } from '../../../src/run/state.js';
import { parseRunRecord } from '../../../src/run/record-schema.js';
import { formatRunTable, formatStopping } from '../../../src/ui/status-table.js';
import type { RunLiveness } from '../../../src/run/liveness.js';
import type { RunRecord } from '../../../src/run/types.js';
import { frontendGone, stoppingRecord } from '../../helpers/stopping-run.js';
import { supervisorHarness } from '../../helpers/supervisor-harness.js';

// A run whose supervisor is stopping it (record state `stopping`) while some of its processes still
// run: status's JSON state keeps CLI.md's word `stopped` (it has none for stopping), and `stopping`
// in the document plus the table's detail say it is not there yet, what runs and when SIGKILL comes.

chalk.level = 0;

const KILL_AT = '2026-12-02T01:05:30.000Z';
const record = (o: Partial<RunRecord> = {}): RunRecord => stoppingRecord({ stopKillAt: KILL_AT, ...o });
/** Supervisor alive, the frontend gone on SIGTERM, both workers still running. */
const midStop = (o: Partial<RunLiveness> = {}): RunLiveness => frontendGone(true, o);
const now = Date.parse('2026-12-02T01:05:03.000Z');

describe('beingStopped: only a live supervisor stopping a run with something still running', () => {
  it.each([
    [true, true, 'stopping', true],
    [false, true, 'stopping', false], // nobody stops it: orphaned
    [true, false, 'stopping', false], // everything ended: stopped is true
    [true, true, 'ready', false],
    [true, true, 'stopped', false],
  ] as const)('supervisor %s, processes %s, record %s -> %s', (supervisor, processes, state, want) => {
    expect(beingStopped(record({ state }), { supervisor, processes })).toBe(want);
  });
});

describe('the status document of a run being stopped', () => {
  it('keeps the state word stopped, stays live, and says who stops it, until when, and what still runs', () => {
    const doc = buildRunStatus(record(), midStop(), '/st', now);
    expect([doc.state, doc.live]).toEqual(['stopped', true]);
    expect(doc.stopping).toEqual({ supervisorPid: 50, killAt: KILL_AT, running: ['agg-0', 'agg-1'] });
  });

  it('no stopping once nothing runs, when the supervisor is gone (orphaned), or for a ready run', () => {
    expect(buildRunStatus(record(), midStop({ processes: false, perProcess: midStop().perProcess.map((p) => ({ ...p, alive: false, pids: [] })) }), '/st', now).stopping).toBeNull();
    const orphan = buildRunStatus(record(), midStop({ supervisor: false }), '/st', now);
    expect([orphan.state, orphan.stopping]).toEqual(['orphaned', null]);
    expect(buildRunStatus(record({ state: 'ready' }), midStop(), '/st', now).stopping).toBeNull();
  });

  it('a record of an older version without stopKillAt: stopping with killAt null', () => {
    const { stopKillAt: _, ...old } = record();
    expect(buildRunStatus(old as RunRecord, midStop(), '/st', now).stopping?.killAt).toBeNull();
  });
});

describe('the status table of a run being stopped', () => {
  const doc = buildRunStatus(record(), midStop(), '/st', now);

  it('the rows of what still runs say stopping, not ready; what has ended keeps its state', () => {
    const rows = formatRunTable(doc, { now }).split('\n').filter((l) => /^  (frontend|agg-\d) /.test(l)).map((l) => l.trim().split(/\s{2,}/).slice(0, 5));
    expect(rows).toEqual([
      ['frontend', expect.any(String), 'no', 'no', expect.not.stringMatching(/stopping/)],
      ['agg-0', '101', 'yes', 'no', 'stopping'],
      ['agg-1', '102', 'yes', 'no', 'stopping'],
    ]);
    // Before the stop began (the record says ready), the same processes read as their records say.
    const ready = formatRunTable(buildRunStatus(record({ state: 'ready' }), midStop(), '/st', now), { now }).split('\n').find((l) => l.startsWith('  agg-0 '))!;
    expect(ready.trim().split(/\s{2,}/).slice(0, 5)).toEqual(['agg-0', '101', 'yes', 'yes', 'ready']);
  });

  it('JSON ready is false for what still runs once SIGTERM went out, as the READY column says; true before the stop began', () => {
    expect(doc.processes.map((p) => [p.name, p.alive, p.ready, p.state])).toEqual([
      ['frontend', false, false, 'ready'], ['agg-0', true, false, 'ready'], ['agg-1', true, false, 'ready'],
    ]);
    const readyCol = (d: typeof doc) => formatRunTable(d, { now }).split('\n').filter((l) => /^  (frontend|agg-\d) /.test(l)).map((l) => l.trim().split(/\s{2,}/)[3] === 'yes');
    expect(readyCol(doc)).toEqual(doc.processes.map((p) => p.ready));
    const before = buildRunStatus(record({ state: 'ready' }), midStop(), '/st', now);
    expect(before.processes.map((p) => p.ready)).toEqual([false, true, true]);
    expect(readyCol(before)).toEqual([false, true, true]);
  });

  it('the first line says stopping and what still runs, without the URL once its frontend ended; a line says what runs and when SIGKILL comes', () => {
    const lines = formatRunTable(doc, { now }).split('\n');
    expect(lines[0]).toBe('run r  agg-router  stopping (2 of 3 processes still running)  m');
    expect(lines).toContain('  ! still stopping: its supervisor (pid 50) sent SIGTERM; agg-0 (pid 101), agg-1 (pid 102) still running; SIGKILL in 27 s for what ignores SIGTERM');
  });

  it('the URL stays while its frontend still runs (it has not ended on SIGTERM yet), though nothing is READY', () => {
    const fe = midStop({ pids: [50, 100, 101, 102], perProcess: [{ name: 'frontend', alive: true, recycled: false, pids: [100] }, ...midStop().perProcess.slice(1)] });
    const d = buildRunStatus(record(), fe, '/st', now);
    expect(formatRunTable(d, { now }).split('\n')[0]).toBe('run r  agg-router  stopping (3 of 3 processes still running)  http://f  m');
    expect(d.processes.map((p) => p.ready)).toEqual([false, false, false]);
  });

  it('SIGKILL in whole seconds up to the moment, then due now; unknown: after its grace', () => {
    const kill = (t: number, killAt: string | null = KILL_AT) => formatStopping({ ...doc, stopping: { ...doc.stopping!, killAt } }, t).join(' ');
    const k = Date.parse(KILL_AT);
    expect(kill(k - 1)).toMatch(/; SIGKILL in 1 s for what ignores SIGTERM$/);
    expect(kill(k - 1000)).toMatch(/; SIGKILL in 1 s for/);
    expect(kill(k - 1001)).toMatch(/; SIGKILL in 2 s for/);
    expect(kill(k)).toMatch(/; SIGKILL sent or due now$/);
    expect(kill(now, null)).toMatch(/; then SIGKILL after its grace$/);
  });

  it('wraps to the terminal under its mark, nothing for a run not being stopped', () => {
    const lines = formatStopping(doc, now, 80);
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    for (const l of lines.slice(1)) expect(l).toMatch(/^ {4}\S/);
    expect(formatStopping({ ...doc, stopping: null }, now)).toEqual([]);
    // Stopped with its frontend ended: no URL to try.
    expect(formatRunTable({ ...doc, stopping: null }, { now }).split('\n')[0]).toBe('run r  agg-router  stopped  m');
  });
});

describe('the supervisor records when SIGKILL comes', () => {
  it('at the stop: the same moment as its stopping event; escalated while stopping: now', async () => {
    const h = supervisorHarness({ graceMs: 7000 });
    void h.sup.run();
    await h.clock.advance(0);
    for (const pid of [100, 101]) {
      h.machine.remove(pid);
      h.machine.add({ pid, ppid: 11, pgid: pid, startTicks: 1000 + pid, cmd: 'stubborn', termExitMs: null });
    }
    void h.sup.stop('SIGINT');
    await new Promise<void>((r) => setImmediate(r));
    expect(h.sup.record.state).toBe('stopping');
    expect(Date.parse(h.sup.record.stopKillAt!)).toBe(h.of('stopping')[0].killAt);
    const t = Date.now();
    h.sup.escalate();
    expect(Date.parse(h.sup.record.stopKillAt!)).toBeGreaterThanOrEqual(t - 1000);
    expect(Date.parse(h.sup.record.stopKillAt!)).toBeLessThan(h.of('stopping')[0].killAt - 5000);
    await h.clock.advance(500);
  });

  it('run.json keeps the field (read back as written)', () => {
    const rec = record();
    const back = parseRunRecord(JSON.stringify(rec), 'r', (n) => `/x/${n}.log`);
    expect(back.ok && back.record.stopKillAt).toBe(KILL_AT);
    expect(parseRunRecord(JSON.stringify({ ...rec, stopKillAt: 5 }), 'r', (n) => `/x/${n}.log`).ok).toBe(false);
  });
});
