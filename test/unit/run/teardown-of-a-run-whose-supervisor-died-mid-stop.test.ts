import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { supervisorStopping } from '../../../src/run/liveness.js';
import { viewOf } from '../../../src/run/state.js';
import { formatRunPlan } from '../../../src/ui/teardown-report.js';
import type { RunsScan } from '../../../src/run/run-scan.js';
import type { ProcStat } from '../../../src/host/procs/parse-proc.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';
import { recordedProcess } from '../../helpers/stopping-run.js';

// A run whose record says `stopping`: only a LIVE supervisor is stopping it. One SIGKILLed (or
// OOM-killed) mid-stop leaves the record saying `stopping` while nothing stops the run: teardown
// must not tell the user "its supervisor is already stopping it" then, but that it stops the run.

chalk.level = 0;

const proc = (name: string, pid: number): ProcessRecord => recordedProcess(name, pid);
const record = (state: RunRecord['state'] = 'stopping'): RunRecord => ({
  id: '20261202-010000-agg-router', recipe: 'agg-router', model: 'm', createdAt: '2026-12-02T01:00:00.000Z', updatedAt: '2026-12-02T01:05:00.000Z',
  supervisor: { pid: 4242, startTicks: 40, detached: true }, state, frontendUrl: 'http://f',
  plan: {} as RunRecord['plan'], processes: [proc('frontend', 100), proc('agg-0', 101), proc('agg-1', 102)],
});
const stat = (pid: number, startTicks: number): ProcStat => ({ pid, comm: 'x', state: 'S', ppid: 1, pgid: pid, session: pid, startTicks });
/** The frontend ended on SIGTERM (unless `frontend`); both workers ignore it. `supervisor`: whether pid 4242 is still the supervisor. */
const scan = (supervisor: boolean, frontend = false): RunsScan => ({
  scan: [...(supervisor ? [stat(4242, 40)] : []), ...(frontend ? [stat(100, 500)] : []), stat(101, 500), stat(102, 500)],
  bootId: null, marks: new Map(), ours: () => true,
});

describe('supervisorStopping: the record says stopping AND its supervisor lives', () => {
  it.each([
    ['stopping', true, true],
    ['stopping', false, false], // died mid-stop: nothing stops it
    ['ready', true, false],
    ['stopped', true, false],
    ['starting', true, false],
  ] as const)('record %s, supervisor alive %s -> %s', (state, alive, want) => {
    expect(supervisorStopping({ state }, alive)).toBe(want);
  });
});

describe('the run view teardown and doctor read', () => {
  it('says stopping while the supervisor that stops it lives', async () => {
    const v = await viewOf('/nonexistent-state', record(), scan(true));
    expect([v.live, v.stopping, v.status]).toEqual([true, true, 'stopped']);
  });

  it('says not stopping once that supervisor died mid-stop, though the record still says stopping (status: orphaned)', async () => {
    const v = await viewOf('/nonexistent-state', record(), scan(false));
    expect(v.record.state).toBe('stopping');
    expect([v.live, v.stopping, v.status]).toEqual([true, false, 'orphaned']);
  });

  it('a ready run with a live supervisor is not being stopped', async () => {
    expect((await viewOf('/nonexistent-state', record('ready'), scan(true))).stopping).toBe(false);
  });
});

describe('teardown\'s line for each run it is about to stop', () => {
  it('a live supervisor stopping it: its supervisor is already stopping it', async () => {
    const v = await viewOf('/nonexistent-state', record(), scan(true));
    expect(formatRunPlan(v, 1)).toBe('stopping run 20261202-010000-agg-router (3 processes, its supervisor is already stopping it; SIGKILL after 1 s)');
  });

  it('a supervisor that died mid-stop: never "already stopping it"; names the dead supervisor and that teardown stops the rest', async () => {
    const v = await viewOf('/nonexistent-state', record(), scan(false));
    const line = formatRunPlan(v, 10);
    expect(line).not.toContain('already stopping');
    expect(line).toBe('stopping run 20261202-010000-agg-router (3 processes, orphaned: its supervisor (pid 4242) died while stopping it; teardown stops what is left; SIGKILL after 10 s)');
  });

  it('a run nobody was stopping: its status, as before', async () => {
    const v = await viewOf('/nonexistent-state', record('ready'), scan(true, true));
    expect(formatRunPlan(v, 0.5)).toBe('stopping run 20261202-010000-agg-router (3 processes, ready; SIGKILL after 0.5 s)');
  });

  it('wraps on a terminal under the run, every word kept; one line when piped', async () => {
    const v = await viewOf('/nonexistent-state', record(), scan(false));
    const piped = formatRunPlan(v, 10);
    const lines = formatRunPlan(v, 10, 80).split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(/^ {2}\S/);
    expect(lines.map((l) => l.trim()).join(' ')).toBe(piped);
  });
});
