import { EventEmitter } from 'node:events';
import { existsSync, fstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import type { ChildProcess, ForkOptions } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { launchDetached, type DetachedOptions } from '../../../src/run/detached.js';
import type { UpEvent } from '../../../src/run/events.js';
import { basePlan } from '../../helpers/supervisor-harness.js';

// The foreground side of `up --detach` (src/run/detached.ts): it starts the background supervisor,
// relays its events until ready and then lets go, passes a stop on, and tells what happened when
// the supervisor is lost. The child is a fake with node's ChildProcess behaviour (disconnect() closes
// the channel and 'disconnect' follows on the next tick); process.kill is a spy, so nothing is signalled.

class FakeChild extends EventEmitter {
  pid: number | undefined = 4242;
  connected = true;
  sendThrows = false;
  readonly sent: unknown[] = [];
  unrefs = 0;
  send(m: unknown): boolean {
    if (this.sendThrows) throw new Error('Channel closed');
    this.sent.push(m);
    return true;
  }
  disconnect(): void {
    this.connected = false;
    process.nextTick(() => this.emit('disconnect'));
  }
  unref(): void {
    this.unrefs++;
  }
  /** The background supervisor speaks. */
  say(m: unknown): void {
    this.emit('message', m);
  }
  /** Its channel closes (it exited or closed it). */
  gone(): void {
    this.connected = false;
    this.emit('disconnect');
  }
}

const options: DetachedOptions = { plan: basePlan, runId: 'r1', stateDir: '/state', env: { HOME: '/home/u', RUN: 'x' }, readyTimeoutMs: 60_000, graceMs: 1000 };
let dir: string;
let kills: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dd-detached-'));
  kills = vi.spyOn(process, 'kill').mockImplementation(() => true);
});
afterEach(() => {
  kills.mockRestore();
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

function launch(onFork?: (o: ForkOptions) => void) {
  const child = new FakeChild();
  const log = join(dir, 'supervisor.log');
  const forks: { module: string; args: string[]; o: ForkOptions }[] = [];
  const h = launchDetached(options, log, (module, args, o) => {
    forks.push({ module, args, o });
    onFork?.(o);
    return child as unknown as ChildProcess;
  });
  const events: UpEvent[] = [];
  const warnings: string[] = [];
  h.on('event', (e: UpEvent) => void events.push(e));
  h.on('warning', (w: string) => void warnings.push(w));
  return { h, child, log, forks, events, warnings };
}

const PENDING = 'pending';
/** The promise's value if it is settled once the pending callbacks ran, else 'pending'. */
const now = <T>(p: Promise<T>) => Promise.race([p, new Promise<typeof PENDING>((r) => setImmediate(() => setImmediate(() => r(PENDING))))]);
const tick = () => new Promise<void>((r) => setImmediate(r));

const starting = { event: 'starting', process: 'agg-0', pid: 101, log: '/l/agg-0.log', waitedFor: [] };
const ready = { event: 'ready', runId: 'r1', url: 'http://f', model: 'm', detached: true };

describe('starting the background supervisor', () => {
  it("it runs the entry module in a session of its own (it outlives the terminal), with the run's environment, output appended to supervisor.log, and gets the options", () => {
    writeFileSync(join(dir, 'supervisor.log'), 'earlier run\n');
    const s = launch((o) => {
      const out = (o.stdio as number[])[1];
      writeSync(out, 'from the supervisor\n');
    });
    expect(s.forks).toHaveLength(1);
    const f = s.forks[0]!;
    expect(basename(f.module)).toBe('detached-entry.js');
    expect(existsSync(f.module.replace(/\.js$/, '.ts'))).toBe(true);
    expect(f.args).toEqual([]);
    const fd = (f.o.stdio as unknown[])[1];
    expect(f.o).toEqual({ detached: true, stdio: ['ignore', fd, fd, 'ipc'], env: options.env, execArgv: [], serialization: 'json' });
    expect(typeof fd).toBe('number');
    expect(readFileSync(s.log, 'utf8')).toBe('earlier run\nfrom the supervisor\n');
    // The foreground does not keep the log open: the supervisor holds its own copy.
    expect(() => fstatSync(fd as number)).toThrow(/EBADF/);
    expect(s.child.sent).toEqual([{ t: 'start', o: options }]);
    expect(s.h.pid).toBe(4242);
  });

  it('a supervisor that cannot be started: up reports lost with the reason', async () => {
    const s = launch();
    s.child.emit('error', new Error('spawn ENOMEM'));
    expect(await now(s.h.result)).toEqual({ outcome: 'lost', code: 1, reason: 'the supervisor could not be started: spawn ENOMEM' });
  });
});

describe('until ready', () => {
  it("relays the supervisor's events and warnings; at ready it lets go at once: detached, exit 0, channel closed, nothing keeps up waiting", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = launch();
    s.child.say({ t: 'event', e: starting });
    s.child.say({ t: 'warning', w: 'slow disk' });
    expect(await now(s.h.result)).toBe(PENDING);
    expect(s.child.connected).toBe(true);
    s.child.say({ t: 'event', e: ready });
    expect(s.events).toEqual([starting, ready]);
    expect(s.warnings).toEqual(['slow disk']);
    expect(await now(s.h.result)).toEqual({ outcome: 'detached', code: 0 });
    expect(s.child.connected).toBe(false);
    expect(s.child.unrefs).toBe(1);
    await tick();
    await tick();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a message it does not know changes nothing', async () => {
    const s = launch();
    s.child.say({ t: 'progress', r: { outcome: 'failed', code: 1, reason: 'x' } });
    expect(await now(s.h.result)).toBe(PENDING);
    expect(s.events).toEqual([]);
  });

  it("a stop or failure before ready is up's result, also when the supervisor's exit is seen before its last message", async () => {
    const s = launch();
    let exited = false;
    void s.h.exited.then(() => (exited = true));
    s.child.emit('exit', 1, null);
    const r = { outcome: 'failed', code: 1, reason: 'agg-0 exited with code 1 before ready' };
    s.child.say({ t: 'result', r });
    s.child.gone();
    await tick();
    expect(await now(s.h.result)).toEqual(r);
    expect(exited).toBe(true);
  });
});

describe('a lost supervisor', () => {
  it('a detached supervisor that dies before ready: up reports lost with its exit code', async () => {
    const s = launch();
    s.child.emit('exit', 3, null);
    expect(await now(s.h.result)).toBe(PENDING);
    s.child.gone();
    expect(await now(s.h.result)).toEqual({ outcome: 'lost', code: 1, reason: 'the supervisor ended before the run was ready (exit code 3)' });
  });

  it('its channel closes first and it is killed soon after: lost names the signal', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = launch();
    s.child.gone();
    await tick();
    expect(await now(s.h.result)).toBe(PENDING);
    s.child.emit('exit', null, 'SIGKILL');
    expect(await now(s.h.result)).toEqual({ outcome: 'lost', code: 1, reason: 'the supervisor ended before the run was ready (killed by SIGKILL)' });
  });

  it('its channel closes and no exit is seen: lost after 1 s, without a cause', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = launch();
    s.child.gone();
    await tick();
    vi.advanceTimersByTime(999);
    expect(await now(s.h.result)).toBe(PENDING);
    vi.advanceTimersByTime(1);
    expect(await now(s.h.result)).toEqual({ outcome: 'lost', code: 1, reason: 'the supervisor ended before the run was ready' });
  });
});

describe('a stop before ready', () => {
  it('Ctrl-C is passed on as a stop, a second one as an escalation; the supervisor is not signalled', () => {
    const s = launch();
    s.h.stop('SIGINT');
    s.h.escalate();
    expect(s.child.sent.slice(1)).toEqual([{ t: 'stop', signal: 'SIGINT' }, { t: 'escalate' }]);
    expect(kills).not.toHaveBeenCalled();
  });

  it('with its channel closed the supervisor gets SIGTERM instead', () => {
    const s = launch();
    s.child.connected = false;
    s.h.stop('SIGINT');
    s.h.escalate();
    expect(s.child.sent).toEqual([{ t: 'start', o: options }]);
    expect(kills.mock.calls).toEqual([[4242, 'SIGTERM']]);
  });

  it('a send that fails falls back to SIGTERM; a supervisor already gone is no error', () => {
    const s = launch();
    s.child.sendThrows = true;
    kills.mockImplementation(() => {
      throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    });
    expect(() => s.h.stop('SIGTERM')).not.toThrow();
    expect(() => s.h.escalate()).not.toThrow();
    expect(kills.mock.calls).toEqual([[4242, 'SIGTERM']]);
  });

  it('a supervisor without a pid (never started) is not signalled', () => {
    const s = launch();
    s.child.pid = undefined;
    s.child.connected = false;
    s.h.stop('SIGINT');
    expect(kills).not.toHaveBeenCalled();
  });
});
