import { describe, expect, it } from 'vitest';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { tempHomes } from '../../helpers/cli.js';
import { deadPid, writeFakeRun } from '../../helpers/proc-trees.js';
import { liveRuns, refuseLiveRuns, runsToJudge, theLiveRun } from '../../../src/run/which-run.js';
import { refuseUnprintableStateDir, resolveStateDir } from '../../../src/run/paths.js';
import { readStartTicks } from '../../../src/run/proc.js';
import { writeRun } from '../../../src/run/state.js';
import { UserError } from '../../../src/errors.js';
import type { RunView } from '../../../src/run/run-view.js';

// Which run a command means without --run (src/run/which-run.ts): the one live run, none (the
// message says so), several (the message names them and the fix picks one); and the state
// directory a path with a control character comes from (src/run/paths.ts).

const home = tempHomes('dd-which-run-');
const self = () => ({ pid: process.pid, startTicks: readStartTicks(process.pid) });

async function liveRun(stateDir: string, id: string, createdAt: string, name?: string) {
  const rec = await writeFakeRun(stateDir, { id, createdAt, supervisor: self(), processes: [] });
  if (name) await writeRun(stateDir, { ...rec, name });
}
const deadRun = (stateDir: string, id: string, createdAt: string) =>
  writeFakeRun(stateDir, { id, createdAt, state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });

async function refusal(p: Promise<unknown>): Promise<UserError> {
  const e = await p.then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(UserError);
  return e as UserError;
}

describe('theLiveRun: the one live run a command acts on', () => {
  const o = { command: 'restart', process: 'agg-0' };

  it('no run live (only a stopped one): the message says nothing to do, the fix is status', async () => {
    const h = home();
    await deadRun(h.stateDir, 'r-dead', '2026-12-01T09:00:00Z');
    const e = await refusal(theLiveRun(h.stateDir, undefined, o));
    expect(e.message).toBe(`no live run in ${h.stateDir}: nothing to restart`);
    expect(e.fix).toBe('dynamo-dev status');
  });

  it('exactly one live run beside a newer stopped one: that run', async () => {
    const h = home();
    await liveRun(h.stateDir, 'r-live', '2026-12-01T09:00:00Z');
    await deadRun(h.stateDir, 'r-dead', '2026-12-01T10:00:00Z');
    expect((await theLiveRun(h.stateDir, undefined, o)).id).toBe('r-live');
  });

  it('two live runs: the message counts and names them (name, else id), the fix names the newest', async () => {
    const h = home();
    await liveRun(h.stateDir, 'r-old', '2026-12-01T09:00:00Z');
    await liveRun(h.stateDir, 'r-new', '2026-12-01T10:00:00Z', 'big');
    const e = await refusal(theLiveRun(h.stateDir, undefined, o));
    expect(e.message).toBe('restart: 2 runs are live (big, r-old); say which with --run ID|NAME');
    expect(e.fix).toBe('dynamo-dev restart agg-0 --run big');
  });

  it('two live runs without names: the fix names the newest by id', async () => {
    const h = home();
    await liveRun(h.stateDir, 'r-old', '2026-12-01T09:00:00Z', 'small');
    await liveRun(h.stateDir, 'r-new', '2026-12-01T10:00:00Z');
    const e = await refusal(theLiveRun(h.stateDir, undefined, o));
    expect(e.message).toBe('restart: 2 runs are live (r-new, small); say which with --run ID|NAME');
    expect(e.fix).toBe('dynamo-dev restart agg-0 --run r-new');
  });

  it('--run names one run even when several are live', async () => {
    const h = home();
    await liveRun(h.stateDir, 'r-old', '2026-12-01T09:00:00Z');
    await liveRun(h.stateDir, 'r-new', '2026-12-01T10:00:00Z');
    expect((await theLiveRun(h.stateDir, 'r-old', o)).id).toBe('r-old');
  });
});

describe('liveRuns and runsToJudge', () => {
  it('liveRuns leaves out a stopped run, newest live first', async () => {
    const h = home();
    await liveRun(h.stateDir, 'r-a', '2026-12-01T08:00:00Z');
    await deadRun(h.stateDir, 'r-dead', '2026-12-01T11:00:00Z');
    await liveRun(h.stateDir, 'r-b', '2026-12-01T09:00:00Z');
    expect((await liveRuns(h.stateDir)).map((v) => v.record.id)).toEqual(['r-b', 'r-a']);
  });

  it('runsToJudge: --run an older live run is that run, the very view of the scan; no --run: byId null', async () => {
    const h = home();
    await liveRun(h.stateDir, 'r-a', '2026-12-01T08:00:00Z');
    await liveRun(h.stateDir, 'r-b', '2026-12-01T09:00:00Z');
    const r = await runsToJudge(h.stateDir, 'r-a');
    expect(r.views.map((v) => v.record.id)).toEqual(['r-b', 'r-a']);
    expect(r.byId?.record.id).toBe('r-a');
    expect(r.byId).toBe(r.views.find((v) => v.record.id === 'r-a'));
    expect((await runsToJudge(h.stateDir)).byId).toBeNull();
  });
});

describe('refuseLiveRuns: up without a name beside a live run', () => {
  const view = (id: string, name?: string) => ({ record: { id, ...(name ? { name } : {}) }, status: 'ready', live: true }) as unknown as RunView;

  it('an unnamed live run: the message has its id and status, no name in parentheses', () => {
    let e: unknown;
    try {
      refuseLiveRuns([view('r1')], { recipeRef: 'agg' });
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(UserError);
    expect((e as UserError).message).toBe('another run is live: run r1 (ready); one up per state directory unless each run has a name');
    expect((e as UserError).fix).toBe('dynamo-dev up agg --name NAME   (a second run beside it, with ports of its own), or dynamo-dev teardown --run r1');
  });

  it('a named live run: its name in parentheses, the teardown fix by name', () => {
    expect(() => refuseLiveRuns([view('r1', 'big')], { recipeRef: 'agg' })).toThrow('another run is live: run r1 (big) (ready); one up per state directory unless each run has a name');
  });
});

describe('the state directory and where a control character in it came from', () => {
  it('resolveStateDir: --state-dir, then DYNAMO_DEV_HOME, then XDG_STATE_HOME/dynamo-dev, then HOME', () => {
    expect(resolveStateDir({ DYNAMO_DEV_HOME: '/d' }, 'rel/x')).toBe(resolve('rel/x'));
    expect(resolveStateDir({ DYNAMO_DEV_HOME: '/d', XDG_STATE_HOME: '/x' })).toBe('/d');
    expect(resolveStateDir({ XDG_STATE_HOME: '/x' })).toBe('/x/dynamo-dev');
    expect(resolveStateDir({ HOME: '/h' })).toBe('/h/.local/state/dynamo-dev');
    expect(resolveStateDir({})).toBe(join(homedir(), '.local', 'state', 'dynamo-dev'));
  });

  const refused = (dir: string, env: NodeJS.ProcessEnv): UserError => {
    try {
      refuseUnprintableStateDir(dir, env);
    } catch (e) {
      expect(e).toBeInstanceOf(UserError);
      return e as UserError;
    }
    throw new Error(`not refused: ${JSON.stringify(dir)}`);
  };

  it('a printable path (spaces, accents, a DEL-free one) is accepted', () => {
    expect(() => refuseUnprintableStateDir('/home/ü s/~ state', { HOME: '/home/ü s' })).not.toThrow();
    // Just outside both control ranges: U+0020 and U+00A0.
    expect(() => refuseUnprintableStateDir('/a b\u00a0c', {})).not.toThrow();
  });

  it('a newline from HOME: said so, and the fix is DYNAMO_DEV_HOME (HOME is not ours to name)', () => {
    const e = refused('/home/a\nb/.local/state/dynamo-dev', { HOME: '/home/a\nb' });
    expect(e.message).toBe('HOME: the state directory "/home/a\\nb/.local/state/dynamo-dev" holds a newline; the paths printed from it (runs, logs) would not be the real ones');
    expect(e.fix).toBe('set DYNAMO_DEV_HOME to a folder whose path has no control characters, or give --state-dir DIR');
  });

  it('an escape from DYNAMO_DEV_HOME (before XDG_STATE_HOME): named, the fix names DYNAMO_DEV_HOME', () => {
    const e = refused('/x\u001b[31m', { DYNAMO_DEV_HOME: '/x\u001b[31m', XDG_STATE_HOME: '/y' });
    expect(e.message).toBe('DYNAMO_DEV_HOME: the state directory "/x\\u001b[31m" holds an escape character; the paths printed from it (runs, logs) would not be the real ones');
    expect(e.fix).toBe('set DYNAMO_DEV_HOME to a folder whose path has no control characters, or give --state-dir DIR');
  });

  it('another control character from XDG_STATE_HOME: "a control character", the fix names XDG_STATE_HOME', () => {
    const e = refused('/y\t/dynamo-dev', { XDG_STATE_HOME: '/y\t' });
    expect(e.message).toBe('XDG_STATE_HOME: the state directory "/y\\t/dynamo-dev" holds a control character; the paths printed from it (runs, logs) would not be the real ones');
    expect(e.fix).toBe('set XDG_STATE_HOME to a folder whose path has no control characters, or give --state-dir DIR');
  });

  it('the range edges: U+001F, U+007F and U+009F are refused', () => {
    for (const c of ['\u001f', '\u007f', '\u009f', '\u0000']) expect(refused(`/s${c}`, {}).message).toContain('holds a control character');
  });
});
