import { describe, expect, it } from 'vitest';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  liveDir, liveMarkerPath, logPath, newRunId, resolveStateDir, runDir, runJsonPath, runsDir, upLockPath,
} from '../../../src/run/paths.js';
import { realClock } from '../../../src/run/clock.js';

// Where a run's files live (CLI.md: $DYNAMO_DEV_HOME, $XDG_STATE_HOME, ~/.local/state) and the real
// clock the supervisor and the stop loop use outside tests.

describe('the state directory', () => {
  it('--state-dir wins over every variable; relative paths are made absolute', () => {
    expect(resolveStateDir({ DYNAMO_DEV_HOME: '/a', XDG_STATE_HOME: '/b', HOME: '/h' }, 'rel/state')).toBe(resolve('rel/state'));
  });

  it('$DYNAMO_DEV_HOME is the state directory itself, before $XDG_STATE_HOME', () => {
    expect(resolveStateDir({ DYNAMO_DEV_HOME: '/a/dd', XDG_STATE_HOME: '/b', HOME: '/h' })).toBe('/a/dd');
    expect(resolveStateDir({ DYNAMO_DEV_HOME: 'dd-home' })).toBe(resolve('dd-home'));
  });

  it('$XDG_STATE_HOME gets a dynamo-dev folder; without either, ~/.local/state/dynamo-dev', () => {
    expect(resolveStateDir({ XDG_STATE_HOME: '/b', HOME: '/h' })).toBe('/b/dynamo-dev');
    expect(resolveStateDir({ XDG_STATE_HOME: 'xdg', HOME: '/h' })).toBe(join(resolve('xdg'), 'dynamo-dev'));
    expect(resolveStateDir({ HOME: '/home/u' })).toBe('/home/u/.local/state/dynamo-dev');
    expect(resolveStateDir({})).toBe(join(homedir(), '.local', 'state', 'dynamo-dev'));
    // Empty variables count as unset (a shell's `export DYNAMO_DEV_HOME=`).
    expect(resolveStateDir({ DYNAMO_DEV_HOME: '', XDG_STATE_HOME: '', HOME: '/home/u' }, '')).toBe('/home/u/.local/state/dynamo-dev');
  });

  it('every file of a run has its documented place', () => {
    const s = '/st';
    expect(runsDir(s)).toBe('/st/runs');
    expect(runDir(s, 'r1')).toBe('/st/runs/r1');
    expect(runJsonPath(s, 'r1')).toBe('/st/runs/r1/run.json');
    expect(logPath(s, 'r1', 'agg-0')).toBe('/st/runs/r1/logs/agg-0.log');
    expect(upLockPath(s)).toBe('/st/up.lock');
    expect(liveDir(s)).toBe('/st/live');
    expect(liveMarkerPath(s, 'r1')).toBe('/st/live/r1');
  });
});

describe('run ids', () => {
  it('date and time with zero-padded fields (month counted from 1), then the recipe', () => {
    expect(newRunId('agg', new Date(2026, 0, 2, 3, 4, 5, 6))).toBe('20260102-030405-006-agg');
    expect(newRunId('disagg', new Date(2026, 11, 31, 23, 59, 58, 999))).toBe('20261231-235958-999-disagg');
  });

  it('a recipe name with spaces, slashes or other characters becomes one dash per run of them; letters, digits, _ . - stay', () => {
    const t = new Date(2026, 10, 30, 10, 15, 0, 123);
    expect(newRunId('my recipe//v2', t)).toBe('20261130-101500-123-my-recipe-v2');
    expect(newRunId('agg_router.v1-b', t)).toBe('20261130-101500-123-agg_router.v1-b');
    expect(newRunId('a/../b', t)).toBe('20261130-101500-123-a-..-b');
  });
});

describe('the real clock', () => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

  it('now() moves forward in milliseconds; sleep(ms) waits at least ms', async () => {
    const a = realClock.now();
    await realClock.sleep(30);
    const b = realClock.now();
    expect(b - a).toBeGreaterThanOrEqual(29);
    expect(b - a).toBeLessThan(5000);
  });

  it('its timers do not keep the process alive unless asked (a supervisor must not hang on a forgotten poll)', () => {
    const base = timers();
    const loose = realClock.setTimeout(() => {}, 60_000);
    const looseEvery = realClock.setInterval(() => {}, 60_000);
    expect(timers()).toBe(base);
    const kept = realClock.setTimeout(() => {}, 60_000, true);
    expect(timers()).toBe(base + 1);
    const keptEvery = realClock.setInterval(() => {}, 60_000, true);
    expect(timers()).toBe(base + 2);
    for (const t of [loose, looseEvery, kept, keptEvery]) realClock.clear(t);
    expect(timers()).toBe(base);
  });

  it('a timeout fires once, an interval repeats, and clear() stops either before it fires', async () => {
    const fired: string[] = [];
    realClock.setTimeout(() => fired.push('once'), 5);
    const cleared = realClock.setTimeout(() => fired.push('cleared'), 5);
    realClock.clear(cleared);
    const clearedEvery = realClock.setInterval(() => fired.push('cleared-every'), 5);
    realClock.clear(clearedEvery);
    let every: ReturnType<typeof realClock.setInterval> | null = null;
    // Awaited on the interval's own third tick: by then every 5 ms timer was due twice over.
    await new Promise<void>((r) => {
      every = realClock.setInterval(() => {
        fired.push('every');
        if (fired.filter((f) => f === 'every').length === 3) r();
      }, 5, true);
    });
    realClock.clear(every!);
    expect(fired.filter((f) => f === 'once')).toEqual(['once']);
    expect(fired.filter((f) => f.startsWith('cleared'))).toEqual([]);
  });
});
