import { afterEach, describe, expect, it } from 'vitest';
import { execa, type ResultPromise } from 'execa';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheQwen3, portBlock, records, survivors } from '../helpers/runs.js';
import { BIN, fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { stopRuns, upHarness } from '../helpers/up-run.js';

// A worker stalled behind a Hugging Face download lock that another process holds, silent as the
// real one is (the fake polls the flock and prints nothing, as huggingface_hub does): up reads the
// held lock from /proc/locks and the hint naming the holder's pid is not only the live view's. Plain output (a pipe) says it on its own line at
// once, and the failure report at the deadline repeats it; --json carries it as a `hint` event and
// in the `failed` event's `hint`.

const homes: ReturnType<typeof tempHome>[] = [];
const harness = upHarness('dd-lock-release-');
afterEach(() => harness.cleanup());
const holders: ResultPromise[] = [];
afterEach(async () => {
  for (const p of holders.splice(0)) {
    p.kill('SIGKILL');
    await p.catch(() => undefined);
  }
  for (const h of homes.splice(0)) {
    await stopRuns(h.stateDir, fakeEnv(h, { python: true }));
    h.cleanup();
  }
});

async function lockedSetup() {
  const h = tempHome('dd-lock-hint-');
  homes.push(h);
  const base = await portBlock(31_000, 80);
  cacheQwen3(h.hfCache);
  const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { [`FAKE_WORKER_SCENARIO_${base + 1}`]: 'lock-wait' } });
  const dir = join(h.hfCache, '.locks', 'models--Qwen--Qwen3-0.6B');
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'f47f71177f32bcd101b7573ec9171e6a57f4f4c31148d38e382306f42996874b.lock');
  writeFileSync(lock, '');
  // A process that takes the lock and keeps it, as a download in another terminal would.
  const holder = execa('python3', ['-c', 'import fcntl,sys,time\nf=open(sys.argv[1])\nfcntl.flock(f, fcntl.LOCK_EX)\nprint("locked", flush=True)\ntime.sleep(60)', lock], { reject: false });
  holders.push(holder);
  await new Promise<void>((r) => holder.stdout!.once('data', () => r()));
  const sets = ['--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`, '--set', `ports.nixlSideChannel=${base + 15}`];
  return { h, env, sets, holder: holder.pid!, holderProc: holder };
}

describe('up: a worker waiting for a Hugging Face lock another process holds', () => {
  it('plain output (a pipe): a line naming the holder pid at once, and again in the failure report above the last line', async () => {
    const s = await lockedSetup();
    const r = await runCli(['up', 'agg-router', '--no-preflight', '--ready-timeout', '8', ...s.sets], s.env, { timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    const err = r.stderr.split('\n');
    const hint = err.findIndex((l) => l.startsWith('! agg-0: waiting for the Hugging Face download lock held by '));
    expect(hint, r.stderr).toBeGreaterThanOrEqual(0);
    expect(err[hint]).toMatch(new RegExp(`held by pid ${s.holder} \\(\\S*python3 -c `));
    expect(err[hint]).toContain('`dynamo-dev doctor --only hf.locks`');
    // Said while waiting: before anything was stopped.
    expect(hint).toBeLessThan(err.findIndex((l) => l.startsWith('stopped ')));
    const last = r.stderr.trimEnd().split('\n');
    expect(last.at(-1)).toMatch(/^✗ up failed: not ready after 8 s: agg-0 is still waiting for the Hugging Face lock /);
    expect(last.at(-2)).toMatch(new RegExp(`^ {2}fix: agg-0 was waiting for the Hugging Face download lock held by pid ${s.holder} `));
    expect(survivors(s.h.stateDir, { supervisor: true })).toEqual([]);
  });

  it('a worker that keeps logging while it waits (not silent) gets the hint too, naming the holder', async () => {
    const s = await lockedSetup();
    s.env.FAKE_LOCK_WAIT_LOG_MS = '200';
    const r = await runCli(['up', 'agg-router', '--no-preflight', '--json', '--ready-timeout', '8', ...s.sets], s.env, { timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    const events = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    // It logged all along: more than one line a second while it waited.
    const log = readFileSync(records(s.h.stateDir)[0].processes.find((p) => p.name === 'agg-0')!.log, 'utf8');
    expect(log.match(/still starting/g)!.length).toBeGreaterThan(5);
    const hint = events.find((e) => e.event === 'hint' && e.code === 'hf.lock-wait');
    expect(hint, r.stdout.slice(-2000)).toMatchObject({ process: 'agg-0' });
    expect(hint!.text).toContain(`held by pid ${s.holder}`);
  });

  it('--json: a hint event naming the holder while waiting, and the failed event\'s hint says it too', async () => {
    const s = await lockedSetup();
    const r = await runCli(['up', 'agg-router', '--no-preflight', '--json', '--ready-timeout', '8', ...s.sets], s.env, { timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    const events = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const hint = events.findIndex((e) => e.event === 'hint');
    expect(events[hint]).toMatchObject({ process: 'agg-0', code: 'hf.lock-wait' });
    expect(events[hint].text).toContain(`held by pid ${s.holder}`);
    const failed = events.findIndex((e) => e.event === 'failed');
    expect(hint).toBeLessThan(failed);
    expect(events[failed]).toMatchObject({ process: 'agg-0' });
    expect(events[failed].hint).toContain(`held by pid ${s.holder}`);
  });

  it('the holder lets go: the hint was shown, the worker loads and the run comes up ready; run.json keeps the wait (bench\'s hf.no-lock-wait)', async () => {
    const s = await lockedSetup();
    const up = harness.startUp(['up', 'agg-router', '--no-preflight', '--json', '--detach', '--ready-timeout', '30', ...s.sets], s.env);
    const hint = await up.waitEvent((e) => e.event === 'hint' && e.code === 'hf.lock-wait');
    expect(hint).toMatchObject({ process: 'agg-0' });
    expect(String(hint.text)).toContain(`held by pid ${s.holder}`);
    s.holderProc.kill('SIGKILL');
    await up.waitEvent((e) => e.event === 'ready');
    expect((await up.exit).code).toBe(0);
    const rec = records(s.h.stateDir)[0];
    const agg0 = rec.processes.find((p) => p.name === 'agg-0')!;
    expect(agg0.state).toBe('ready');
    expect(agg0.lockWait).toMatchObject({ holderPid: s.holder });
    expect(agg0.lockWait!.lockPath).toContain(join('.locks', 'models--Qwen--Qwen3-0.6B'));
  });
});
