import { existsSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, tempHomes } from '../../helpers/cli.js';
import { lockFolder, setupLockPath } from '../../../src/host/python/installer.js';
import { runSetup, type SetupInput } from '../../../src/run/setup.js';
import type { SetupEvent } from '../../../src/run/setup-events.js';

// runSetup (src/run/setup.ts), setup-aiperf.ts and setup-dry-run.ts called directly, with the fakes
// of setup's e2e tests (test/fixtures/bin/setup: a fake Python 3.13 whose environments' pip acts out
// FAKE_PIP, and logs every command to FAKE_SETUP_LOG) and a temp home and cache of the test's own.

const home = tempHomes('dd-setup-svc-');
const SETUP_BIN = join(FIXTURES, 'bin', 'setup');

function world(vars: Record<string, string | undefined> = {}, o: { gpu?: string } = {}) {
  const h = home();
  const base = fakeEnv(h, { gpu: o.gpu });
  const env = { ...base, PATH: [SETUP_BIN, base.PATH].join(delimiter), FAKE_SETUP_FIXTURES: FIXTURES, FAKE_SETUP_LOG: join(h.dir, 'commands.log'), ...vars };
  const envs = join(h.dir, 'cache', 'dynamo-dev', 'envs');
  const ran = () => (existsSync(env.FAKE_SETUP_LOG) ? readFileSync(env.FAKE_SETUP_LOG, 'utf8').split('\n').filter(Boolean) : []);
  return { h, env, envs, mocker: join(envs, '1.6.1-mocker'), aiperf: join(envs, 'aiperf-0.13.0'), ran };
}

async function setup(env: NodeJS.ProcessEnv, o: Partial<SetupInput> = {}) {
  const events: SetupEvent[] = [];
  const before = Date.now();
  const code = await runSetup({ device: 'gpu', dryRun: false, env, startedAt: before, onEvent: (e) => events.push(e), ...o });
  const wall = Date.now() - before;
  const names = events.filter((e) => e.event !== 'install').map((e) => e.event);
  const one = <K extends SetupEvent['event']>(k: K) => events.find((e) => e.event === k) as Extract<SetupEvent, { event: K }> | undefined;
  return { code, events, names, one, wall };
}

describe('a setup that builds, then finds what it built', () => {
  it('first: python, choice, tools (not again), ready, AIPerf made, next; second: no Python asked, nothing installed, already; durations count from startedAt', async () => {
    const w = world();
    const first = await setup(w.env);
    expect(first.code).toBe(0);
    expect(first.names).toEqual(['machine', 'python', 'choice', 'tools', 'ready', 'aiperf-installing', 'aiperf-step', 'aiperf-step', 'aiperf-step', 'aiperf', 'done']);
    expect(first.one('choice')).toMatchObject({ release: '1.6.1', engine: 'mocker', device: 'gpu', dir: w.mocker, build: null, computeCap: null });
    expect(first.one('tools')).toEqual({ event: 'tools', python: { path: join(SETUP_BIN, 'python3.13'), version: '3.13.0' }, installer: 'pip', uv: null, dir: w.mocker, again: false });
    const done = first.one('done')!;
    expect(done.next).toBe('dynamo-dev up mocker');
    expect(done.made).toMatchObject({ already: false, dir: w.mocker, python: join(w.mocker, 'bin', 'python'), log: join(w.mocker, 'setup.log') });
    expect(done.durationMs).toBeGreaterThanOrEqual(0);
    expect(done.durationMs).toBeLessThanOrEqual(first.wall);
    expect(done.made.elapsedMs).toBeLessThanOrEqual(done.durationMs);
    expect(first.one('aiperf')).toEqual({ event: 'aiperf', ok: true, alreadyComplete: false, dir: w.aiperf, python: join(w.aiperf, 'bin', 'python'), version: '0.13.0' });
    // The installer's steps are told as they go, and both folders' locks are given back.
    expect(first.events.filter((e) => e.event === 'install').length).toBeGreaterThan(0);
    expect(existsSync(setupLockPath(w.env, w.mocker))).toBe(false);
    expect(existsSync(setupLockPath(w.env, w.aiperf))).toBe(false);

    const ranBefore = w.ran().length;
    const second = await setup(w.env);
    expect(second.code).toBe(0);
    expect(second.names).toEqual(['machine', 'choice', 'ready', 'aiperf', 'done']);
    expect(second.one('ready')!.made).toMatchObject({ already: true, dir: w.mocker, python: join(w.mocker, 'bin', 'python'), log: join(w.mocker, 'setup.log') });
    expect(second.one('aiperf')).toMatchObject({ ok: true, alreadyComplete: true, dir: w.aiperf });
    expect(second.one('done')).toMatchObject({ next: 'dynamo-dev up mocker' });
    expect(second.one('done')!.durationMs).toBeLessThanOrEqual(second.wall);
    // Not one command: no interpreter asked its version, no venv, no pip.
    expect(w.ran().slice(ranBefore)).toEqual([]);
  });

  it('AIPerf\'s environment removed meanwhile: the next setup finds Dynamo\'s complete, asks for a Python itself and makes AIPerf\'s again', async () => {
    const w = world();
    expect((await setup(w.env)).code).toBe(0);
    rmSync(w.aiperf, { recursive: true, force: true });
    const again = await setup(w.env);
    expect(again.code).toBe(0);
    expect(again.names).toEqual(['machine', 'choice', 'ready', 'aiperf-installing', 'aiperf-step', 'aiperf-step', 'aiperf-step', 'aiperf', 'done']);
    expect(again.one('aiperf')).toEqual({ event: 'aiperf', ok: true, alreadyComplete: false, dir: w.aiperf, python: join(w.aiperf, 'bin', 'python'), version: '0.13.0' });
    expect(w.ran()).toContain(`python3.13 -m venv ${w.aiperf}`);
  });

  it('AIPerf\'s install failing after Dynamo\'s is found: exit 1, its cause, tail and log; Dynamo\'s still ready', async () => {
    const w = world();
    expect((await setup(w.env)).code).toBe(0);
    rmSync(w.aiperf, { recursive: true, force: true });
    const r = await setup({ ...w.env, FAKE_PIP: 'fail' });
    expect(r.code).toBe(1);
    const a = r.one('aiperf') as { ok: false; cause: string; tail: string[]; log: string };
    expect(a.ok).toBe(false);
    expect(a.tail.join('\n')).toContain('No matching distribution found for aiperf==0.13.0');
    expect(a.log.startsWith(w.aiperf)).toBe(true);
    expect(r.one('done')).toMatchObject({ next: 'dynamo-dev up mocker' });
  });

  it('AIPerf\'s folder locked by another setup: aiperf-busy names the holder, setup still exits 0', async () => {
    const w = world();
    const lock = lockFolder(w.aiperf, w.env);
    expect(lock.ok).toBe(true);
    try {
      const r = await setup(w.env);
      expect(r.code).toBe(0);
      expect(r.one('aiperf-busy')).toEqual({ event: 'aiperf-busy', dir: w.aiperf, heldBy: process.pid, installerLeft: null });
      expect(existsSync(w.aiperf)).toBe(false);
    } finally {
      if (lock.ok) lock.release();
    }
  });
});

describe('uv on PATH', () => {
  it('the build and AIPerf\'s use uv: tools and the plan name it, uv makes both environments', async () => {
    const w = world();
    const env = { ...w.env, PATH: [join(FIXTURES, 'bin', 'setup-uv'), w.env.PATH].join(delimiter) };
    const uv = join(FIXTURES, 'bin', 'setup-uv', 'uv');
    const dry = await setup(env, { dryRun: true });
    expect(dry.one('plan')).toMatchObject({ installer: 'uv', uv });
    const r = await setup(env);
    expect(r.code).toBe(0);
    expect(r.one('tools')).toMatchObject({ installer: 'uv', uv });
    expect(w.ran().filter((l) => l.startsWith('uv venv'))).toEqual([
      `uv venv --quiet --seed --python ${join(SETUP_BIN, 'python3.13')} ${w.mocker}`,
      `uv venv --quiet --seed --python ${join(SETUP_BIN, 'python3.13')} ${w.aiperf}`,
    ]);
  });
});

describe('the command printed next', () => {
  it('DYNAMO_DEV_PYTHON naming another interpreter: the environment made is not the default, so next says --release', async () => {
    const w = world({ DYNAMO_DEV_PYTHON: join(SETUP_BIN, 'python3.13') });
    const r = await setup(w.env);
    expect(r.code).toBe(0);
    expect(r.one('done')!.next).toBe('dynamo-dev up mocker --release 1.6.1');
  });

  it('DYNAMO_DEV_PYTHON empty counts as unset: next is the bare command', async () => {
    const w = world({ DYNAMO_DEV_PYTHON: '' });
    expect((await setup(w.env)).one('done')!.next).toBe('dynamo-dev up mocker');
  });

  it('--dir outside envs/: next names its interpreter with --python, quoted for the shell', async () => {
    const w = world();
    const dir = join(w.h.dir, 'my env');
    const r = await setup(w.env, { dir });
    expect(r.code).toBe(0);
    expect(r.one('choice')!.dir).toBe(dir);
    expect(r.one('done')!.next).toBe(`dynamo-dev up mocker --python '${join(dir, 'bin', 'python')}'`);
  });

  it('--device cpu: vLLM\'s CPU build in its own folder, device cpu in the choice, next runs agg on the CPU', async () => {
    const w = world();
    const r = await setup(w.env, { device: 'cpu', engine: 'mocker' });
    expect(r.code).toBe(0);
    expect(r.one('choice')).toMatchObject({ engine: 'vllm', device: 'cpu', dir: join(w.envs, '1.6.1-vllm-cpu') });
    expect(r.one('done')!.next).toBe('dynamo-dev up agg --device cpu --model MODEL');
    // The second is a no-op for the same device (a cpu marker matches a cpu ask).
    const again = await setup(w.env, { device: 'cpu' });
    expect(again.one('ready')!.made.already).toBe(true);
  });
});
