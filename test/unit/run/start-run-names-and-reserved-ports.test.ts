import { closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURES, tempHomes } from '../../helpers/cli.js';
import { freeBlock } from '../../helpers/ports.js';
import { basePlan } from '../../helpers/supervisor-harness.js';
import { startRun, type StartDeps, type StartEvent, type StartRunOptions } from '../../../src/run/start-run.js';
import { planRun, type PlannedRun } from '../../../src/run/plan-run.js';
import { parseRecipe } from '../../../src/recipe/load.js';
import type { SupervisionOptions } from '../../../src/run/supervisor.js';
import type { Recipe } from '../../../src/recipe/schema.js';
import { runDir, upLockPath } from '../../../src/run/paths.js';
import { parseLock } from '../../../src/run/up-lock.js';
import { UserError } from '../../../src/errors.js';

// startRun between the lock and the run folder: a --name that is a run's id, the ports another
// starting run noted in its held up lock (a run without a name is refused naming it, one with a
// name moves beside it), what our own lock notes while the run starts, and what is left behind
// after a refusal: nothing. Supervision and preflight are faked; the "other starting run" is a lock
// file this test holds with flock(1) on its own descriptor.

const home = tempHomes('dd-startrun-names-');
const opened: number[] = [];
afterEach(() => opened.splice(0).forEach((fd) => closeSync(fd)));

/** Another `up` starting beside ours: its lock file held, noting `ports`. */
function startingBeside(stateDir: string, lockName: string, runId: string, ports: number[]): void {
  mkdirSync(stateDir, { recursive: true });
  const path = join(stateDir, lockName);
  writeFileSync(path, JSON.stringify({ pid: 4242, runId, createdAt: '2026-12-07T00:00:00Z', ports }));
  const fd = openSync(path, constants.O_RDWR);
  expect(spawnSync('flock', ['--nonblock', '--exclusive', '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] }).status).toBe(0);
  opened.push(fd);
}

function fakePlanned(stateDir: string, id = '20261207-080000-000-agg-router', plan = basePlan): PlannedRun & { planAtCalls: number } {
  const p = { runId: id, probeEnv: {}, planAtCalls: 0, planAt: (dir: string) => { p.planAtCalls++; return { ...plan, runDir: dir }; }, plan: { ...plan, runDir: runDir(stateDir, id) } };
  return p;
}

function start(stateDir: string, p: PlannedRun, o: Partial<StartRunOptions> = {}) {
  const events: StartEvent[] = [];
  const handed: SupervisionOptions[] = [];
  const notes: unknown[] = [];
  const deps: Partial<StartDeps> = {
    supervise: async (so) => {
      handed.push(so);
      notes.push(parseLock(readFileSync(upLockPath(stateDir, o.name), 'utf8')));
      return { outcome: 'detached', code: 0 };
    },
    preflight: async () => true,
    portsFree: async () => true,
  };
  const done = startRun(p, {
    stateDir, env: {}, recipe: { name: 'agg-router' } as Recipe, recipeRef: 'agg-router', python: 'python3', detach: true,
    preflight: false, model: null, json: false, onEvent: (e) => events.push(e), ...o, deps,
  });
  return { events, handed, notes, done };
}

async function refusal(p: Promise<unknown>): Promise<UserError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(UserError);
  return err as UserError;
}

const ourPorts = basePlan.processes.flatMap((p) => Object.values(p.ports)).filter((p) => p > 0); // 8081, 8082: only noted, never bound

describe('startRun: names, and ports another starting run noted', () => {
  it('--name that is the id of a run folder: refused naming it, nothing made, supervision never asked', async () => {
    const h = home();
    mkdirSync(runDir(h.stateDir, 'exp1'), { recursive: true });
    const p = fakePlanned(h.stateDir);
    const s = start(h.stateDir, p, { name: 'exp1' });
    const err = await refusal(s.done);
    expect(err.message).toBe(`--name: exp1 is the id of a run in ${h.stateDir}; --run exp1 would mean that run: choose another name`);
    expect(s.events).toEqual([]);
    expect(s.handed).toEqual([]);
    expect(existsSync(runDir(h.stateDir, p.runId))).toBe(false);
  });

  it('no name, one port of the plan noted by a named run starting beside: refused naming that run, its pid and the port; nothing left behind', async () => {
    const h = home();
    startingBeside(h.stateDir, 'up.left.lock', 'run-left', [ourPorts[0], 60001]);
    const p = fakePlanned(h.stateDir);
    const s = start(h.stateDir, p);
    const err = await refusal(s.done);
    expect(err.message).toBe(`port ${ourPorts[0]} of this run is taken by run left, starting beside it (pid 4242); nothing started`);
    expect(err.fix).toBe('dynamo-dev up agg-router --name NAME   (a run of its own, on other ports)');
    expect(s.events).toEqual([]);
    expect(s.handed).toEqual([]);
    expect(readdirSync(h.stateDir).filter((n) => n === 'runs' || n === 'live').flatMap((n) => readdirSync(join(h.stateDir, n)))).toEqual([]);
  });

  it('several ports of the plan noted: each named, in the note\'s order, "are"', async () => {
    const h = home();
    const p = fakePlanned(h.stateDir);
    startingBeside(h.stateDir, 'up.other.lock', 'run-other', [...ourPorts].reverse().concat([60002]));
    const err = await refusal(start(h.stateDir, p).done);
    expect(err.message).toBe(`ports ${[...ourPorts].reverse().join(', ')} of this run are taken by run other, starting beside it (pid 4242); nothing started`);
  });

  it('a note on other ports, or the note of a run that ended (lock free): the run goes ahead, and our lock notes our ports while it starts', async () => {
    const h = home();
    startingBeside(h.stateDir, 'up.far.lock', 'run-far', [60003]);
    mkdirSync(h.stateDir, { recursive: true });
    writeFileSync(join(h.stateDir, 'up.ended.lock'), JSON.stringify({ pid: 4243, runId: 'run-ended', ports: ourPorts }));
    const p = fakePlanned(h.stateDir);
    const s = start(h.stateDir, p, { readyTimeoutS: 3_000_000 });
    expect(await s.done).toEqual({ code: 0, runId: p.runId, interrupted: null });
    expect(s.notes[0]).toMatchObject({ pid: process.pid, runId: p.runId, ports: [...ourPorts].sort((a, b) => a - b) });
    // A free id: the plan given is the plan used, not made again.
    expect(p.planAtCalls).toBe(0);
    expect(s.events[0]).toMatchObject({ event: 'plan', runId: p.runId });
    expect((s.events[0] as { plan: unknown }).plan).toBe(p.plan);
    // A deadline past what a timer holds is the longest timer.
    expect(s.handed[0].readyTimeoutMs).toBe(2 ** 31 - 1);
  });

  it('a plan without processes: the run\'s logs folder is still said', async () => {
    const h = home();
    const p = fakePlanned(h.stateDir, '20261207-080000-000-empty', { ...basePlan, processes: [] });
    const s = start(h.stateDir, p);
    await s.done;
    expect(s.events[1]).toEqual({ event: 'run', runId: p.runId, logsDir: join(runDir(h.stateDir, p.runId), 'logs') });
  });

  it('--name with its ports noted by another starting run: moves beside them, says so before the plan, and notes the new ports', async () => {
    const h = home();
    const base = await freeBlock(24_000, 200, 20, [0, 1, 20, 21]);
    const recipe = parseRecipe('name: m\nengine: mocker\nworkers:\n  - role: agg\n', 'm.yaml', [`frontend.httpPort=${base}`, `ports.system=${base + 1}`]);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python') };
    const p = await planRun({ recipe, source: 'm.yaml', python: { interpreter: 'python3', source: 'given', managed: null }, env, stateDir: h.stateDir, dryRun: true });
    const theirs = p.plan.processes.flatMap((x) => Object.values(x.ports));
    expect(theirs).toContain(base);
    startingBeside(h.stateDir, 'up.first.lock', 'run-first', theirs);
    const s = start(h.stateDir, p, { recipe, name: 'second' });
    expect((await s.done).code).toBe(0);
    expect(s.events.map((e) => e.event).slice(0, 2)).toEqual(['ports-beside', 'plan']);
    const plan = (s.events[1] as { plan: typeof p.plan }).plan;
    const mine = plan.processes.flatMap((x) => Object.values(x.ports));
    expect(mine.some((x) => theirs.includes(x))).toBe(false);
    expect(s.handed[0].plan).toBe(plan);
    expect(s.handed[0].recipe).not.toBe(recipe);
    expect(s.handed[0]).toMatchObject({ name: 'second' });
    expect(s.notes[0]).toMatchObject({ runId: p.runId, ports: [...new Set(mine)].sort((a, b) => a - b) });
  });

  it('--name with nothing beside it: keeps its ports and the recipe, still says its ports', async () => {
    const h = home();
    const base = await freeBlock(24_000, 200, 20, [0, 1, 20, 21]);
    const recipe = parseRecipe('name: m\nengine: mocker\nworkers:\n  - role: agg\n', 'm.yaml', [`frontend.httpPort=${base}`, `ports.system=${base + 1}`]);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python') };
    const p = await planRun({ recipe, source: 'm.yaml', python: { interpreter: 'python3', source: 'given', managed: null }, env, stateDir: h.stateDir, dryRun: true });
    const s = start(h.stateDir, p, { recipe, name: 'solo' });
    expect((await s.done).code).toBe(0);
    expect(s.events[0]).toMatchObject({ event: 'ports-beside' });
    expect((s.events[0] as { line: string }).line).toContain(String(base));
    expect(s.handed[0].recipe).toBe(recipe);
  });
});
