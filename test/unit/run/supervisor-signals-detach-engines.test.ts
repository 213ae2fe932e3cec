import { afterEach, describe, expect, it } from 'vitest';
import type { DescendantRecord } from '../../../src/run/types.js';
import type { Clock } from '../../../src/run/clock.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { supervisorHarness } from '../../helpers/supervisor-harness.js';

// The supervisor's signals (Ctrl-C, SIGTERM, SIGHUP; a second one means "now"), `up --detach`, the
// engine processes it records for teardown, and the Hugging Face lock hint, with every dependency
// faked (test/helpers/supervisor-harness.ts).

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const counts = () => SIGNALS.map((s) => process.listenerCount(s));
/** Our own handler for a signal (the test runner has its own, which must never be called). */
function handlerFor(sig: (typeof SIGNALS)[number], before: Function[]): () => void {
  const mine = process.listeners(sig).filter((l) => !before.includes(l));
  expect(mine).toHaveLength(1);
  return mine[0] as () => void;
}
const installed = new Map<string, Function[]>();
afterEach(() => {
  // A failed test must not leave a handler that stops a later test's supervisor.
  for (const s of SIGNALS) for (const l of process.listeners(s)) if (!installed.get(s)?.includes(l)) process.off(s, l as () => void);
});

describe('signals', () => {
  it('Ctrl-C, SIGTERM and SIGHUP each stop the run; the handlers are removed when it ends', async () => {
    for (const sig of SIGNALS) installed.set(sig, process.listeners(sig));
    const base = counts();
    const h = supervisorHarness({ handleSignals: undefined as unknown as boolean });
    const running = h.sup.run();
    await h.clock.advance(0);
    expect(counts()).toEqual(base.map((n) => n + 1));
    handlerFor('SIGHUP', installed.get('SIGHUP')!)();
    await h.clock.advance(500);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 0, signal: 'SIGHUP' });
    expect(counts()).toEqual(base);
  });

  it('a second signal while stopping SIGKILLs at once instead of waiting out the grace', async () => {
    for (const sig of SIGNALS) installed.set(sig, process.listeners(sig));
    const h = supervisorHarness({ handleSignals: true, graceMs: 10_000 });
    const running = h.sup.run();
    await h.clock.advance(0);
    for (const pid of [100, 101]) {
      h.machine.remove(pid);
      h.machine.add({ pid, ppid: 11, pgid: pid, startTicks: 1000 + pid, cmd: 'stubborn', termExitMs: null });
    }
    const onInt = handlerFor('SIGINT', installed.get('SIGINT')!);
    onInt();
    await h.clock.advance(100);
    expect(h.machine.signals.filter((s) => s.sig === 'SIGKILL')).toEqual([]);
    onInt();
    await h.clock.advance(100);
    expect(h.machine.signals.filter((s) => s.sig === 'SIGKILL').map((s) => [s.t, s.pid])).toEqual([[100, -100], [100, -101]]);
    expect(await running).toMatchObject({ outcome: 'stopped', code: 0, signal: 'SIGINT' });
  });

  it('with handleSignals off nothing is installed (the caller drives stop() itself)', async () => {
    const base = counts();
    const h = supervisorHarness({ handleSignals: false });
    void h.sup.run();
    await h.clock.advance(0);
    expect(counts()).toEqual(base);
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });
});

describe('timers', () => {
  it('the ready deadline keeps the process alive (every process may be waiting, nothing else pending); the engine re-scan does not', async () => {
    const fake = new FakeClock();
    const kept: string[] = [];
    const clock: Clock = {
      now: () => fake.now(),
      sleep: (ms) => fake.sleep(ms),
      setTimeout: (fn, ms, keepAlive) => (kept.push(`timeout ${ms} ${keepAlive === true}`), fake.setTimeout(fn, ms)),
      setInterval: (fn, ms, keepAlive) => (kept.push(`interval ${ms} ${keepAlive === true}`), fake.setInterval(fn, ms)),
      clear: (t) => fake.clear(t),
    };
    const h = supervisorHarness({ readyTimeoutMs: 45_000, deps: { clock } });
    void h.sup.run();
    await fake.advance(0);
    expect(kept.slice(0, 2)).toEqual(['timeout 45000 true', 'interval 2000 false']);
    void h.sup.stop('SIGINT');
    await fake.advance(500);
  });
});

describe('engine processes recorded for teardown', () => {
  const engine = (pid: number): DescendantRecord => ({ pid, startTicks: 5000 + pid, cmd: 'VLLM::EngineCore' });

  it('re-scanned every 2 s while starting and written to run.json when they change; a failed scan changes nothing', async () => {
    const found = new Map<number, DescendantRecord[]>();
    let fail = false;
    const scans: number[] = [];
    const h = supervisorHarness({
      deps: {
        descendants: (pid) => {
          scans.push(pid);
          if (fail) throw new Error('EACCES');
          return found.get(pid) ?? [];
        },
      },
    });
    void h.sup.run();
    await h.clock.advance(0);
    scans.length = 0;
    await h.clock.advance(1999);
    expect(scans).toEqual([]);
    found.set(101, [engine(150)]);
    const writes = h.writes.length;
    await h.clock.advance(1);
    expect(scans).toEqual([100, 101]);
    expect(h.sup.record.processes[1].descendants).toEqual([engine(150)]);
    expect(h.writes.length).toBe(writes + 1);
    fail = true;
    await h.clock.advance(2000);
    expect(h.sup.record.processes[1].descendants).toEqual([engine(150)]);
    expect(h.writes.length).toBe(writes + 1); // nothing changed, nothing written
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });

  it('once ready, re-scanned only every 30 s (each scan reads /proc)', async () => {
    const scans: number[] = [];
    const h = supervisorHarness({ descendantsMs: 1000, deps: { descendants: (pid) => (scans.push(pid), []) } });
    void h.sup.run();
    await h.allReady();
    expect(h.sup.record.state).toBe('ready');
    const readyAt = h.of('ready')[0].ms;
    scans.length = 0;
    await h.clock.advance(readyAt + 29_999 - h.clock.now());
    expect(scans).toEqual([]);
    await h.clock.advance(1);
    expect(scans).toEqual([100, 101, 102]);
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });

  it('a slower configured re-scan than 30 s is kept once ready', async () => {
    const scans: number[] = [];
    const h = supervisorHarness({ descendantsMs: 45_000, deps: { descendants: (pid) => (scans.push(pid), []) } });
    void h.sup.run();
    await h.allReady();
    const readyAt = h.of('ready')[0].ms;
    scans.length = 0;
    await h.clock.advance(readyAt + 44_999 - h.clock.now());
    expect(scans).toEqual([]);
    await h.clock.advance(1);
    expect(scans.length).toBe(3);
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
  });

  it('the engines found at the moment of the stop are recorded, so teardown can verify them later', async () => {
    let found: DescendantRecord[] = [];
    const h = supervisorHarness({ deps: { descendants: (pid) => (pid === 101 ? found : []) } });
    void h.sup.run();
    await h.clock.advance(0);
    found = [engine(150)];
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
    expect(h.sup.record.processes[1].descendants).toEqual([engine(150)]);
  });

  it('a process that failed is not scanned for engines any more', async () => {
    const scans: number[] = [];
    const h = supervisorHarness({ deps: { descendants: (pid) => (scans.push(pid), []) } });
    void h.sup.run();
    await h.clock.advance(0);
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0);
    scans.length = 0;
    await h.clock.advance(500);
    expect(scans).not.toContain(101);
  });
});

describe('up --detach', () => {
  it('once ready: the supervisor lets go of its processes (they run on), stops following logs, leaves no timer, and says detached', async () => {
    const h = supervisorHarness({ detach: true });
    const running = h.sup.run();
    await h.allReady();
    expect(await running).toEqual({ outcome: 'detached', code: 0 });
    expect(h.unrefs.sort()).toEqual(['agg-0', 'agg-1', 'frontend']);
    expect(h.followerStops.sort()).toEqual(['agg-0', 'agg-1', 'frontend']);
    expect(h.clock.pending).toBe(0);
    expect(h.machine.signals).toEqual([]);
    expect(h.of('ready')[0].detached).toBe(true);
    expect(h.writes.at(-1)).toBe('ready');
    // A process exiting after the detach is nobody's business here any more.
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(100);
    expect(h.of('failed')).toEqual([]);
  });
});

describe('the Hugging Face lock hint', () => {
  const wait = (s: number) => `2026-10-07T04:58:21.118004Z  INFO filelock: Still waiting to acquire lock on /hf/.locks/x.lock (elapsed: ${s}.1 seconds)`;

  async function hintWith(holders: () => Promise<{ pid: number; cmd: string | null }[]>) {
    const h = supervisorHarness({ deps: { lockHolders: holders } });
    void h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(wait(10));
    await h.clock.advance(0);
    const hints = h.of('hint').filter((e) => e.code === 'hf.lock-wait');
    void h.sup.stop('SIGINT');
    await h.clock.advance(500);
    return hints.map((e) => e.text);
  }

  it('names a holder of this run as such, and cuts a long command line at 60 characters, after a whole word', async () => {
    const long = `python3 -m dynamo.vllm --model ${'x'.repeat(80)}`;
    expect(await hintWith(async () => [{ pid: 0, cmd: 'kernel' }, { pid: 100, cmd: long }])).toEqual([
      'waiting for the Hugging Face download lock held by pid 100 (this run) (python3 -m dynamo.vllm --model…); see `dynamo-dev doctor --only hf.locks`',
    ]);
  });

  it('a holder without a command line is named by pid only', async () => {
    expect(await hintWith(async () => [{ pid: 4242, cmd: null }])).toEqual([
      'waiting for the Hugging Face download lock held by pid 4242; see `dynamo-dev doctor --only hf.locks`',
    ]);
  });

  it('nobody visible holds it, or the lookup failed: a stale lock or another container', async () => {
    const stale = 'waiting for the Hugging Face download lock held by a process this machine cannot see (another container?) or none: a stale lock; see `dynamo-dev doctor --only hf.locks`';
    expect(await hintWith(async () => [])).toEqual([stale]);
    expect(await hintWith(async () => {
      throw new Error('fuser missing');
    })).toEqual([stale]);
  });

  it('no hint once the run is stopping (the lookup answered too late)', async () => {
    let answer: (v: { pid: number; cmd: string | null }[]) => void = () => {};
    const h = supervisorHarness({ deps: { lockHolders: () => new Promise((r) => (answer = r)) } });
    void h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(wait(10));
    void h.sup.stop('SIGINT');
    answer([{ pid: 4242, cmd: 'x' }]);
    await h.clock.advance(500);
    expect(h.of('hint')).toEqual([]);
  });
});
