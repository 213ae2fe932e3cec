import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listen, supervise, type DetachedHost, type MakeSupervisor } from '../../../src/run/detached-main.js';
import type { DetachedOptions } from '../../../src/run/detached.js';
import type { UpEvent } from '../../../src/run/events.js';
import type { Diagnosis } from '../../../src/run/diagnosis.js';
import type { SupervisorOptions, SupervisorResult } from '../../../src/run/supervisor.js';
import { basePlan, supervisorHarness } from '../../helpers/supervisor-harness.js';

// The background supervisor of `up --detach` (src/run/detached-main.ts) in process: its IPC channel
// to the foreground and its output (supervisor.log) are a fake host; the supervisor is either the
// real one with every dependency faked (test/helpers/supervisor-harness.ts) or a scripted one that
// emits exactly the events a test needs.

/** The background process's channel and output. Like node's: a send's callback comes later, disconnecting twice throws. */
class FakeHost extends EventEmitter implements DetachedHost {
  connected = true;
  sendThrows = false;
  exitCode?: number | string;
  /** What reached the foreground, and when the channel was closed. */
  journal: unknown[] = [];
  readonly out: string[] = [];
  readonly err: string[] = [];
  readonly stdout = { write: (s: string) => this.out.push(s) };
  readonly stderr = { write: (s: string) => this.err.push(s) };
  send = (m: unknown, _h: undefined, _o: object, callback: (err: Error | null) => void): boolean => {
    if (this.sendThrows || !this.connected) throw new Error('Channel closed');
    this.journal.push(m);
    setImmediate(() => {
      this.journal.push('written');
      callback(null);
    });
    return true;
  };
  disconnect(): void {
    if (!this.connected) throw new Error('IPC channel is already disconnected');
    this.connected = false;
    this.journal.push('disconnect');
    process.nextTick(() => this.emit('disconnect'));
  }
  /** The foreground let go (ready) or died. */
  gone(): void {
    this.connected = false;
    this.emit('disconnect');
  }
  get sent(): unknown[] {
    return this.journal.filter((j) => typeof j === 'object');
  }
}

/** A supervisor that emits what the test says and records what it is asked to do. */
class ScriptedSupervisor extends EventEmitter {
  readonly calls: string[] = [];
  finish!: (r: SupervisorResult) => void;
  run = () => new Promise<SupervisorResult>((r) => (this.finish = r));
  stop = async (signal: string) => void this.calls.push(`stop ${signal}`);
  escalate = () => void this.calls.push('escalate');
  crash = async (err: unknown) => void this.calls.push(`crash ${(err as Error).message}`);
  tell(e: Partial<UpEvent>): void {
    this.emit('event', e as UpEvent);
  }
}

const options: DetachedOptions = { plan: basePlan, runId: 'r1', stateDir: '/state', env: { HOME: '/home/u' }, readyTimeoutMs: 60_000, graceMs: 1000 };

function scripted() {
  const host = new FakeHost();
  const sup = new ScriptedSupervisor();
  const made: SupervisorOptions[] = [];
  const make: MakeSupervisor = (o) => (made.push(o), sup);
  let finished = false;
  const running = () => {
    const p = supervise(options, host, make).then(() => void (finished = true));
    return p;
  };
  return { host, sup, make, made, running, finished: () => finished };
}

const tick = () => new Promise<void>((r) => setImmediate(r));
const T = '2026-12-01T13:00:00.000Z';
afterEach(() => void vi.useRealTimers());

const exited = (process: string, o: Partial<Extract<UpEvent, { event: 'exited' }>>): Partial<UpEvent> =>
  ({ event: 'exited', process, code: null, signal: null, error: null, diagnosis: null, afterReady: false, lastLines: [], log: `/l/${process}.log`, ...o });
const ready: Partial<UpEvent> = { event: 'ready', runId: 'r1', url: 'http://f', model: 'm', detached: true };

describe('the start', () => {
  it("the foreground's start message starts the run's supervision with its options, detached and watching", async () => {
    const host = new FakeHost();
    const made: SupervisorOptions[] = [];
    const sup = new ScriptedSupervisor();
    listen(host, (o) => (made.push(o), sup));
    expect(made).toEqual([]);
    host.emit('message', { t: 'start', o: options });
    expect(made).toEqual([{ ...options, detach: true, watch: true }]);
    // Only the first message starts anything.
    host.emit('message', { t: 'start', o: options });
    expect(made).toHaveLength(1);
    sup.finish({ outcome: 'stopped', code: 0, signal: 'SIGTERM', beforeReady: false });
  });

  it('a first message that is not a start starts nothing', () => {
    const host = new FakeHost();
    const made: SupervisorOptions[] = [];
    listen(host, (o) => (made.push(o), new ScriptedSupervisor()));
    host.emit('message', { t: 'stop', signal: 'SIGINT' });
    host.emit('message', { t: 'start', o: options });
    expect(made).toEqual([]);
  });
});

describe('supervisor.log', () => {
  it('one stamped line per exit, ready, failure and stop (a failure reason on one line); nothing for the other events', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(T));
    const s = scripted();
    void s.running();
    s.sup.tell({ event: 'starting', process: 'frontend', pid: 100, log: '/l/frontend.log', waitedFor: [] });
    s.sup.tell({ event: 'log-ready', process: 'agg-0', kvTokens: 14816, ms: 900 });
    s.sup.tell(exited('frontend', { error: 'spawn python3 ENOENT', code: 1 }));
    s.sup.tell(exited('agg-1', { code: 3 }));
    s.sup.tell(ready);
    s.sup.tell(exited('agg-0', { signal: 'SIGKILL', code: 137, afterReady: true, diagnosis: { code: 'cuda.oom' } as Diagnosis }));
    s.sup.tell({ event: 'failed', reason: 'agg-0 exited\n  with code 1', process: 'agg-0', diagnosis: null, hint: null, lastLines: [], log: null });
    s.sup.tell({ event: 'stopped', runId: 'r1', reason: 'failure', stopped: [], remaining: [] });
    s.sup.tell({ event: 'hint', process: 'agg-0', code: 'x', text: 'y' });
    expect(s.host.out).toEqual([
      `${T} frontend could not be started\n`,
      `${T} agg-1 exited with code 3\n`,
      `${T} ready\n`,
      `${T} agg-0 was killed by SIGKILL after ready (diagnosis: cuda.oom)\n`,
      `${T} failed: agg-0 exited with code 1\n`,
      `${T} stopped\n`,
    ]);
  });

  it('every warning is written to its stderr, stamped, also after ready', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(T));
    const s = scripted();
    void s.running();
    s.sup.emit('warning', 'port 8081 is slow');
    s.sup.tell(ready);
    s.sup.emit('warning', 'agg-0 log rotated');
    expect(s.host.err).toEqual([`${T} warning: port 8081 is slow\n`, `${T} warning: agg-0 log rotated\n`]);
  });
});

describe('talking to the foreground', () => {
  it('events and warnings reach the foreground until ready (ready included), none after', () => {
    const s = scripted();
    void s.running();
    const starting: Partial<UpEvent> = { event: 'starting', process: 'agg-0', pid: 101, log: '/l/agg-0.log', waitedFor: [] };
    s.sup.tell(starting);
    s.sup.emit('warning', 'slow disk');
    s.sup.tell(ready);
    s.sup.tell(exited('agg-0', { signal: 'SIGKILL', afterReady: true }));
    s.sup.emit('warning', 'after');
    expect(s.host.sent).toEqual([{ t: 'event', e: starting }, { t: 'warning', w: 'slow disk' }, { t: 'event', e: ready }]);
  });

  it('a foreground that is gone (a send throws, or the channel is closed) does not stop the supervision', () => {
    const s = scripted();
    void s.running();
    s.host.sendThrows = true;
    expect(() => s.sup.tell({ event: 'starting', process: 'agg-0' })).not.toThrow();
    expect(() => s.sup.emit('warning', 'w')).not.toThrow();
    s.host.sendThrows = false;
    s.host.connected = false;
    expect(() => s.sup.tell({ event: 'starting', process: 'agg-1' })).not.toThrow();
    expect(s.host.sent).toEqual([]);
    expect(s.sup.calls).toEqual([]);
  });

  it("the foreground's stop (Ctrl-C) and escalation (a second one) reach the supervisor; other messages do nothing", () => {
    const s = scripted();
    void s.running();
    s.host.emit('message', { t: 'start', o: options });
    s.host.emit('message', { t: 'stop', signal: 'SIGINT' });
    s.host.emit('message', { t: 'hello' });
    expect(s.sup.calls).toEqual(['stop SIGINT']);
    s.host.emit('message', { t: 'escalate' });
    expect(s.sup.calls).toEqual(['stop SIGINT', 'escalate']);
  });

  it('the foreground gone before ready (killed, its terminal closed) stops the run as a hang-up', () => {
    const s = scripted();
    void s.running();
    s.sup.tell({ event: 'starting', process: 'agg-0' });
    s.host.gone();
    expect(s.sup.calls).toEqual(['stop SIGHUP']);
  });

  it('the foreground letting go at ready changes nothing: the run goes on', () => {
    const s = scripted();
    void s.running();
    s.sup.tell(ready);
    s.host.gone();
    expect(s.sup.calls).toEqual([]);
  });

  it('a bug in the background (an uncaught exception, an unhandled rejection) goes to the supervisor, which stops everything', () => {
    const s = scripted();
    void s.running();
    s.host.emit('uncaughtException', new Error('boom'));
    s.host.emit('unhandledRejection', new Error('later'));
    expect(s.sup.calls).toEqual(['crash boom', 'crash later']);
  });
});

describe('the end', () => {
  it("the run's result reaches the foreground before the channel is closed; the process exits with the run's code", async () => {
    const s = scripted();
    const done = s.running();
    const r: SupervisorResult = { outcome: 'failed', code: 1, reason: 'agg-0 exited with code 1' };
    s.sup.finish(r);
    await done;
    expect(s.host.journal).toEqual([{ t: 'result', r }, 'written', 'disconnect']);
    expect(s.host.exitCode).toBe(1);
  });

  it("the foreground already gone at the end: no send, the closed channel left alone, the run's code", async () => {
    const s = scripted();
    const done = s.running();
    s.sup.tell(ready);
    s.host.gone();
    s.sup.finish({ outcome: 'stopped', code: 1, signal: 'SIGTERM', beforeReady: false });
    await done;
    expect(s.host.sent).toEqual([{ t: 'event', e: ready }]);
    expect(s.host.journal).not.toContain('disconnect');
    expect(s.host.exitCode).toBe(1);
  });

  it("the result's send throws (the foreground died just then): the process still exits with the run's code", async () => {
    const s = scripted();
    const done = s.running();
    s.host.sendThrows = true;
    s.sup.finish({ outcome: 'failed', code: 1, reason: 'x' });
    await done;
    expect(s.host.exitCode).toBe(1);
  });

  it('a process without an IPC channel (no send) ends with the run: nothing to tell', async () => {
    const s = scripted();
    s.host.send = undefined as unknown as FakeHost['send'];
    const done = s.running();
    s.sup.tell({ event: 'starting', process: 'agg-0' });
    s.sup.finish({ outcome: 'stopped', code: 0, signal: 'SIGTERM', beforeReady: true });
    await done;
    expect(s.host.exitCode).toBe(0);
  });
});

describe('with the real supervisor (every dependency faked)', () => {
  it('after ready it keeps watching: a worker killed later is noted, the others keep running, and it ends only when stopped', async () => {
    let h!: ReturnType<typeof supervisorHarness>;
    const make: MakeSupervisor = (o) =>
      (h = supervisorHarness({ plan: o.plan, env: o.env, graceMs: o.graceMs, readyTimeoutMs: o.readyTimeoutMs, detach: o.detach, watch: o.watch, handleSignals: false })).sup;
    const host = new FakeHost();
    let finished = false;
    const done = supervise(options, host, make).then(() => void (finished = true));
    await h.allReady();
    expect(host.sent.at(-1)).toMatchObject({ t: 'event', e: { event: 'ready', detached: true } });
    host.gone(); // the foreground lets go at ready
    const told = host.sent.length;
    h.exits.get('agg-1')!({ code: null, signal: 'SIGKILL', error: null });
    await h.clock.advance(0);
    await tick();
    expect(host.out.filter((l) => / agg-1 /.test(l))).toEqual([expect.stringMatching(/Z agg-1 was killed by SIGKILL after ready\n$/)]);
    expect(h.machine.signals).toEqual([]);
    expect(finished).toBe(false);
    expect(host.sent).toHaveLength(told);
    // teardown's SIGTERM (handled by the supervisor itself)
    void h.sup.stop('SIGTERM');
    await h.clock.advance(1000);
    await done;
    expect(host.exitCode).toBe(0);
    expect(host.out.at(-1)).toMatch(/Z stopped\n$/);
  });
});
