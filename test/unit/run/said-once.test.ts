import { describe, expect, it } from 'vitest';
import { endedWords, whenEnded } from '../../../src/run/ended.js';
import { onStopSignals, stopThenEscalate, STOP_SIGNALS } from '../../../src/run/signals.js';
import { refuseLiveRuns } from '../../../src/run/which-run.js';
import type { RunView } from '../../../src/doctor/types.js';
import { UserError } from '../../../src/errors.js';

// What issue 30 says once: how a process ended, the stop signals (first stops, a later one
// escalates), which run a starting command refuses.

describe('endedWords', () => {
  it('a signal wins over a code; a start that failed says so, with its error after a colon, in parentheses or not at all', () => {
    expect(endedWords({ code: null, signal: 'SIGKILL' })).toBe('was killed by SIGKILL');
    expect(endedWords({ code: 137, signal: 'SIGKILL' })).toBe('was killed by SIGKILL');
    expect(endedWords({ code: 3, signal: null })).toBe('exited with code 3');
    expect(endedWords({ code: 0, signal: null, error: null })).toBe('exited with code 0');
    expect(endedWords({ code: null, signal: null, error: 'ENOENT' })).toBe('could not be started: ENOENT');
    expect(endedWords({ code: null, signal: 'SIGTERM', error: 'ENOENT' }, 'parens')).toBe('could not be started (ENOENT)');
    expect(endedWords({ code: null, signal: null, error: 'ENOENT' }, 'omit')).toBe('could not be started');
    expect(whenEnded(true)).toBe('after the run was ready');
    expect(whenEnded(false)).toBe('before it was ready');
  });
});

describe('the stop signals', () => {
  it('are SIGINT, SIGTERM and SIGHUP, each handler told which; removed, nothing is left listening', () => {
    expect(STOP_SIGNALS).toEqual(['SIGINT', 'SIGTERM', 'SIGHUP']);
    const before = STOP_SIGNALS.map((s) => process.listenerCount(s));
    const got: string[] = [];
    const off = onStopSignals((s) => got.push(s));
    process.emit('SIGTERM');
    process.emit('SIGHUP');
    off();
    process.emit('SIGINT' as never);
    expect(got).toEqual(['SIGTERM', 'SIGHUP']);
    expect(STOP_SIGNALS.map((s) => process.listenerCount(s))).toEqual(before);
  });

  it('the first stops, every later one escalates, naming the signal; a stop already under way escalates at once', () => {
    const calls: string[] = [];
    const off = stopThenEscalate({ stop: (s) => calls.push(`stop ${s}`), escalate: (s) => calls.push(`escalate ${s}`) });
    process.emit('SIGINT' as never);
    process.emit('SIGINT' as never);
    process.emit('SIGTERM');
    off();
    expect(calls).toEqual(['stop SIGINT', 'escalate SIGINT', 'escalate SIGTERM']);
    const busy: string[] = [];
    const off2 = stopThenEscalate({ stop: (s) => busy.push(`stop ${s}`), escalate: (s) => busy.push(`escalate ${s}`), stopping: () => true });
    process.emit('SIGHUP');
    off2();
    expect(busy).toEqual(['escalate SIGHUP']);
  });
});

describe('refuseLiveRuns', () => {
  const view = (id: string, name?: string) => ({ record: { id, ...(name ? { name } : {}) }, status: 'ready', live: true }) as unknown as RunView;
  const refusal = (f: () => void): UserError => {
    try {
      f();
    } catch (err) {
      return err as UserError;
    }
    throw new Error('not refused');
  };

  it('up without a name: any live run, named by its name for the fix', () => {
    const e = refusal(() => refuseLiveRuns([view('r1', 'exp')], { recipeRef: 'agg' }));
    expect(e).toBeInstanceOf(UserError);
    expect(e.message).toBe('another run is live: run r1 (exp) (ready); one up per state directory unless each run has a name');
    expect(e.fix).toBe('dynamo-dev up agg --name NAME   (a second run beside it, with ports of its own), or dynamo-dev teardown --run exp');
    expect(refusal(() => refuseLiveRuns([view('r2')], { recipeRef: 'mocker' })).fix).toContain('teardown --run r2');
  });

  it('up --name: only a live run of the same name; none live: nothing refused', () => {
    expect(() => refuseLiveRuns([view('r1', 'a')], { name: 'b', recipeRef: 'agg' })).not.toThrow();
    expect(() => refuseLiveRuns([], { recipeRef: 'agg' })).not.toThrow();
    const e = refusal(() => refuseLiveRuns([view('r1', 'a'), view('r2', 'b')], { name: 'b', recipeRef: 'agg' }));
    expect(e.message).toBe('--name: a run named b is live (r2, ready); choose another name');
    expect(e.fix).toBe('dynamo-dev teardown --run b');
  });

  it('bench: any live run, named or not', () => {
    const e = refusal(() => refuseLiveRuns([view('r1', 'a')], { name: 'x', recipeRef: 'agg', for: 'bench' }));
    expect(e.message).toBe('another run is live: run r1 (ready); bench starts its own runs');
    expect(e.fix).toBe('dynamo-dev teardown --run r1');
    expect(() => refuseLiveRuns([], { recipeRef: 'agg', for: 'bench' })).not.toThrow();
  });
});
