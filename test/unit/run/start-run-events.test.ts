import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempHomes } from '../../helpers/cli.js';
import { basePlan } from '../../helpers/supervisor-harness.js';
import { startRun, type StartDeps, type StartEvent, type StartRunOptions } from '../../../src/run/start-run.js';
import type { PlannedRun } from '../../../src/run/plan-run.js';
import type { SupervisionOptions } from '../../../src/run/supervisor.js';
import type { Recipe } from '../../../src/recipe/schema.js';
import { runDir } from '../../../src/run/paths.js';
import { markerFor } from '../../../src/run/run-scan.js';

// startRun, the one way a run starts (up in the foreground or detached, each bench variant): what
// it tells as events, in which order, what it hands the supervision, and the exit code it returns,
// with the supervision and the preflight faked (the real ones are the e2e tests').

const home = tempHomes('dd-startrun-');

function planned(stateDir: string, id = '20261207-080000-000-agg-router'): PlannedRun {
  const planAt = (dir: string) => ({ ...basePlan, runDir: dir });
  return { runId: id, probeEnv: { MARKED: '1' }, planAt, plan: planAt(runDir(stateDir, id)) };
}

function start(stateDir: string, p: PlannedRun, o: Partial<StartRunOptions> & { deps?: Partial<StartDeps> } = {}) {
  const events: StartEvent[] = [];
  const handed: { o: SupervisionOptions; detach: boolean }[] = [];
  const deps: Partial<StartDeps> = {
    supervise: async (so, detach, emit) => {
      handed.push({ o: so, detach });
      emit({ event: 'ready', runId: so.runId, url: 'http://f', model: 'm', curl: '', workers: [], logs: {}, ms: 1, detached: detach });
      return { outcome: 'detached', code: 0 };
    },
    preflight: async () => true,
    portsFree: async () => true,
    ...o.deps,
  };
  const done = startRun(p, {
    stateDir, env: {}, recipe: { name: 'agg-router' } as Recipe, recipeRef: 'agg-router', python: 'python3', detach: true,
    preflight: false, model: null, json: false, onEvent: (e) => events.push(e), ...o, deps,
  });
  return { events, handed, done };
}

describe('startRun', () => {
  it('tells the plan, then the run, then what the supervision tells; hands it the run with its deadline, grace and marker', async () => {
    const h = home();
    const p = planned(h.stateDir);
    const s = start(h.stateDir, p);
    expect(await s.done).toEqual({ code: 0, runId: p.runId, interrupted: null });
    expect(s.events.map((e) => e.event)).toEqual(['plan', 'run', 'ready']);
    expect(s.events[0]).toEqual({ event: 'plan', runId: p.runId, plan: p.plan });
    expect(s.events[1]).toEqual({ event: 'run', runId: p.runId, logsDir: join(runDir(h.stateDir, p.runId), 'logs') });
    expect(s.handed).toHaveLength(1);
    const o = s.handed[0].o;
    expect(s.handed[0].detach).toBe(true);
    expect(o).toMatchObject({ runId: p.runId, stateDir: h.stateDir, readyTimeoutMs: 900_000, graceMs: 10_000, runMarker: markerFor(h.stateDir, p.runId) });
    expect(o).not.toHaveProperty('name');
    expect(o).not.toHaveProperty('restart');
    expect(existsSync(runDir(h.stateDir, p.runId))).toBe(true);
  });

  it('no deadline (0) is the longest timer; the grace and the restart policy as given; the foreground supervises here', async () => {
    const h = home();
    const s = start(h.stateDir, planned(h.stateDir), { readyTimeoutS: 0, graceS: 2.5, restart: { mode: 'on-failure', max: 2 }, detach: false });
    await s.done;
    expect(s.handed[0]).toMatchObject({ detach: false, o: { readyTimeoutMs: 2 ** 31 - 1, graceMs: 2500, restart: { mode: 'on-failure', max: 2 } } });
    const t = start(home().stateDir, planned(h.stateDir), { readyTimeoutS: 3 });
    await t.done;
    expect(t.handed[0].o.readyTimeoutMs).toBe(3000);
  });

  it('a taken run id gets a suffix, and the plan is made again for its folder', async () => {
    const h = home();
    const p = planned(h.stateDir);
    mkdirSync(runDir(h.stateDir, p.runId), { recursive: true });
    const s = start(h.stateDir, p);
    const r = await s.done;
    expect(r.runId).toBe(`${p.runId}-2`);
    expect(s.events[0]).toMatchObject({ event: 'plan', runId: `${p.runId}-2`, plan: { runDir: runDir(h.stateDir, `${p.runId}-2`) } });
    expect(s.handed[0].o.runId).toBe(`${p.runId}-2`);
  });

  it('the lock is released however it ends: a second start in the same state directory goes ahead', async () => {
    const h = home();
    await start(h.stateDir, planned(h.stateDir, 'a')).done;
    const failing = start(h.stateDir, planned(h.stateDir, 'b'), { deps: { supervise: async () => { throw new Error('boom'); } } });
    await expect(failing.done).rejects.toThrow('boom');
    expect((await start(h.stateDir, planned(h.stateDir, 'c')).done).code).toBe(0);
  });

  it('preflight runs with the probes\' environment; a failure starts nothing and leaves no run folder (exit 1), an interrupt exits 130', async () => {
    const h = home();
    const seen: unknown[] = [];
    const p = planned(h.stateDir, 'pf');
    const failed = start(h.stateDir, p, { preflight: true, deps: { preflight: async (i) => (seen.push(i.env), false) } });
    expect(await failed.done).toEqual({ code: 1, runId: 'pf', interrupted: null });
    expect(seen).toEqual([{ MARKED: '1' }]);
    expect(failed.handed).toHaveLength(0);
    expect(failed.events.map((e) => e.event)).toEqual(['plan']);
    expect(existsSync(runDir(h.stateDir, 'pf'))).toBe(false);
    const cut = start(h.stateDir, planned(h.stateDir, 'pi'), { preflight: true, deps: { preflight: async () => 'interrupted' } });
    expect((await cut.done).code).toBe(130);
    const skipped = start(h.stateDir, planned(h.stateDir, 'ps'), { preflight: false, deps: { preflight: async () => { throw new Error('must not run'); } } });
    expect((await skipped.done).code).toBe(0);
    // --no-preflight still asks whether the plan's ports are free: a taken one starts nothing (exit 1).
    const taken = start(h.stateDir, planned(h.stateDir, 'pt'), { preflight: false, deps: { preflight: async () => { throw new Error('must not run'); }, portsFree: async () => false } });
    expect((await taken.done).code).toBe(1);
    expect(taken.handed).toHaveLength(0);
    expect(existsSync(runDir(h.stateDir, 'pt'))).toBe(false);
  });

  it('a stop before ready exits 130 saying nothing is left; one that left survivors exits 1 saying so; a stop after ready is its own code', async () => {
    const h = home();
    const stopped = (code: 0 | 1, beforeReady: boolean) => start(h.stateDir, planned(h.stateDir, `s${code}${beforeReady}`), {
      deps: { supervise: async () => ({ outcome: 'stopped', code, signal: 'SIGINT', beforeReady }) },
    }).done;
    expect(await stopped(0, true)).toMatchObject({ code: 130, interrupted: 'interrupted before ready: nothing left running' });
    expect(await stopped(1, true)).toMatchObject({ code: 1, interrupted: 'interrupted before ready: some processes survived SIGKILL (listed above); see `dynamo-dev status`' });
    expect(await stopped(0, false)).toMatchObject({ code: 0, interrupted: null });
    expect(await stopped(1, false)).toMatchObject({ code: 1, interrupted: null });
  });

  it('a warning of the supervision is a warning event, never a run event', async () => {
    const h = home();
    const s = start(h.stateDir, planned(h.stateDir), {
      deps: { supervise: async (_o, _d, _emit, warn) => (warn('cannot write run.json'), { outcome: 'failed', code: 1, reason: 'x' }) },
    });
    expect((await s.done).code).toBe(1);
    expect(s.events.at(-1)).toEqual({ event: 'warning', text: 'cannot write run.json' });
  });
});
