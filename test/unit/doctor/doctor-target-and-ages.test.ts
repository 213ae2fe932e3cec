import { describe, expect, it } from 'vitest';
import { chooseLogRun, ownRunView, resolveDoctorTarget, runPids } from '../../../src/doctor/prepare.js';
import type { RunView } from '../../../src/doctor/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { RunRecord } from '../../../src/run/types.js';
import { recipeFrom } from '../../helpers/facts.js';

// Which recipe doctor judges and how old the latest run reads in the line the user sees.
const NOW = Date.parse('2026-11-30T12:00:00.000Z');
const run = (status: RunView['status'], agoMs: number | null, o: Partial<RunView> = {}): RunView => ({
  record: { id: 'r1', recipe: 'agg', processes: [], updatedAt: agoMs === null ? 'not a date' : new Date(NOW - agoMs).toISOString() } as unknown as RunRecord,
  status, live: false, pids: [], lost: [], logsDir: '/s/runs/r1/logs', ...o,
});
const HOW = '`dynamo-dev up` starts one; --logs PATH judges log files';
const skipLine = (age: string) => `no live run: no logs to judge (the latest run r1 stopped${age}: \`dynamo-dev doctor --run r1\` judges it; ${HOW})`;
const summaryFor = (agoMs: number | null, status: RunView['status'] = 'stopped') =>
  chooseLogRun({ runs: { live: null, byId: null, latest: run(status, agoMs) }, now: NOW }).none!.summary;

describe('chooseLogRun: the age of the latest run', () => {
  it('under a minute in seconds, at least 1 s (a clock a little ahead reads 1 s too)', () => {
    expect(summaryFor(59_000)).toBe(skipLine(' 59 s ago'));
    expect(summaryFor(0)).toBe(skipLine(' 1 s ago'));
    expect(summaryFor(-5_000)).toBe(skipLine(' 1 s ago'));
  });
  it('exactly a minute in minutes; under two hours in minutes; exactly two hours in hours', () => {
    expect(summaryFor(60_000)).toBe(skipLine(' 1 min ago'));
    expect(summaryFor(2 * 3_600_000 - 60_000)).toBe(skipLine(' 119 min ago'));
    expect(summaryFor(2 * 3_600_000)).toBe(skipLine(' 2 h ago'));
  });
  it('an unreadable time says no age, and a failed run with no age is not called recent', () => {
    expect(summaryFor(null)).toBe(skipLine(''));
    const r = chooseLogRun({ runs: { live: null, byId: null, latest: run('failed', null) }, now: NOW });
    expect(r.none!.status).toBe('skip');
  });
  it('a recent failure warns with the two commands that show why', () => {
    const r = chooseLogRun({ runs: { live: null, byId: null, latest: run('failed', 30_000) }, now: NOW });
    expect(r).toEqual({
      run: null,
      none: {
        status: 'warn',
        summary: 'no live run; the latest run r1 (agg) failed 30 s ago: its logs are not judged here',
        fix: 'see why: `dynamo-dev doctor --run r1`, or `dynamo-dev diagnose --run r1`',
      },
    });
  });
  it('no run at all: the whole line, and nothing to fix', () => {
    expect(chooseLogRun({ runs: { live: null, byId: null, latest: null }, now: NOW })).toEqual({
      run: null, none: { status: 'skip', summary: `no live run: no logs to judge (${HOW})`, fix: null },
    });
  });
  it("--recipe of another recipe: the fix names both ways to judge the live run", () => {
    const live = run('ready', 0, { live: true });
    expect(chooseLogRun({ runs: { live, byId: null, latest: live }, recipeName: 'agg-router', now: NOW }).none!.fix)
      .toBe('judge the live run: dynamo-dev doctor (without --recipe) or dynamo-dev doctor --run r1');
  });
  it('a recorded live run that is no longer live is not judged; --run names one even if absent', () => {
    const stale = run('stopped', 60_000);
    expect(chooseLogRun({ runs: { live: stale, byId: null, latest: stale }, now: NOW }).run).toBeNull();
    expect(chooseLogRun({ runs: { live: null, byId: null, latest: stale }, runId: 'nope', now: NOW })).toEqual({ run: null, none: null });
  });
});

describe('ownRunView and runPids', () => {
  it('a live run whose left-over engine runs as another user is not ours', () => {
    const v = run('degraded', 0, { live: true, pids: [500], lost: [{ name: 'agg-1', role: 'agg', how: 'killed', exitCode: null, signal: 'SIGKILL', at: null, noticed: false, leftPids: [600], diagnosis: null }] });
    expect(runPids(v)).toEqual([500, 600]);
    const r = ownRunView(v, new Map([[500, 1000], [600, 1001]]), 1000);
    expect(r).toMatchObject({ live: false, pids: [], lost: [] });
    expect(ownRunView(v, new Map([[500, 1000], [600, 1000]]), 1000)).toBe(v);
  });
  it('a run view without a lost list counts its own pids', () => {
    expect(runPids({ ...run('ready', 0), pids: [1, 2], lost: undefined } as unknown as RunView)).toEqual([1, 2]);
  });
});

describe('resolveDoctorTarget', () => {
  it('nothing named and no run: the built-in agg, said to be the default', async () => {
    const t = await resolveDoctorTarget({ run: null, stateDir: '/tmp/dd-state' });
    expect(t.source).toBe('agg (default)');
    expect(t.recipe.name).toBe('agg');
    expect(t.plan.recipe).toBe('agg');
  });

  it('--recipe names the recipe; its plan is built with the --python given', async () => {
    const t = await resolveDoctorTarget({ recipeRef: 'agg-router', run: run('ready', 0, { live: true }), stateDir: '/tmp/dd-state', python: '/venv/bin/python' });
    expect(t.source).toBe('agg-router');
    expect(t.plan.processes[0].argv[0]).toBe('/venv/bin/python');
  });

  it("a run: its own recipe and recorded plan; a run that is not live says its state", async () => {
    const recipe = recipeFrom({ name: 'mine' });
    const plan = buildPlan({ recipe, runDir: '/tmp/x' });
    const rec = { id: 'r9', recipe: 'mine', recipeSpec: recipe, plan, processes: [] } as unknown as RunRecord;
    const live = await resolveDoctorTarget({ run: { ...run('ready', 0), record: rec, live: true }, stateDir: '/tmp/s' });
    expect(live).toEqual({ recipe, plan, source: 'mine (run r9)' });
    const failed = await resolveDoctorTarget({ run: { ...run('failed', 0), record: rec }, stateDir: '/tmp/s' });
    expect(failed.source).toBe('mine (run r9, failed)');
  });

  it("a run without its recipe spec whose recipe cannot be loaded falls back to the default", async () => {
    const rec = { id: 'r9', recipe: '/nonexistent/gone.yaml', plan: null, processes: [] } as unknown as RunRecord;
    const t = await resolveDoctorTarget({ run: { ...run('stopped', 0), record: rec }, stateDir: '/tmp/s' });
    expect(t.source).toBe('agg (default)');
  });
});
