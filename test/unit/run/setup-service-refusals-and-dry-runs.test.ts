import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, tempHomes } from '../../helpers/cli.js';
import { UserError } from '../../../src/errors.js';
import { lockFolder, setupLockPath } from '../../../src/host/python/installer.js';
import { readStatSync } from '../../../src/host/procs/proc-files.js';
import { runSetup, type SetupInput } from '../../../src/run/setup.js';
import type { SetupEvent } from '../../../src/run/setup-events.js';

// runSetup (src/run/setup.ts) and its --dry-run plan (src/run/setup-dry-run.ts) called directly:
// folders it refuses (never touched), a folder of ours for another release/engine/device, no
// Python, a lock held, a failed build started over, a Python too old for AIPerf, the plan's
// commands. Fakes: setup's e2e ones (test/fixtures/bin/setup), a temp home and cache per test.

const home = tempHomes('dd-setup-ref-');
const SETUP_BIN = join(FIXTURES, 'bin', 'setup');

function world(vars: Record<string, string | undefined> = {}, o: { gpu?: string; path?: string } = {}) {
  const h = home();
  const base = fakeEnv(h, { gpu: o.gpu });
  const env = { ...base, PATH: o.path ?? [SETUP_BIN, base.PATH].join(delimiter), FAKE_SETUP_FIXTURES: FIXTURES, FAKE_SETUP_LOG: join(h.dir, 'commands.log'), ...vars };
  const envs = join(h.dir, 'cache', 'dynamo-dev', 'envs');
  const ran = () => (existsSync(env.FAKE_SETUP_LOG) ? readFileSync(env.FAKE_SETUP_LOG, 'utf8').split('\n').filter(Boolean) : []);
  return { h, env, envs, mocker: join(envs, '1.6.1-mocker'), aiperf: join(envs, 'aiperf-0.13.0'), ran };
}

async function setup(env: NodeJS.ProcessEnv, o: Partial<SetupInput> = {}) {
  const events: SetupEvent[] = [];
  const code = await runSetup({ device: 'gpu', dryRun: false, env, startedAt: Date.now(), onEvent: (e) => events.push(e), ...o });
  const names = events.filter((e) => e.event !== 'install').map((e) => e.event);
  const one = <K extends SetupEvent['event']>(k: K) => events.find((e) => e.event === k) as Extract<SetupEvent, { event: K }> | undefined;
  return { code, events, names, one };
}

async function refused(env: NodeJS.ProcessEnv, o: Partial<SetupInput> = {}): Promise<UserError> {
  const err = await setup(env, o).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(UserError);
  return err as UserError;
}

const markerOf = (dir: string) => join(dir, 'dynamo-dev-setup.json');
function editMarker(dir: string, change: Record<string, unknown>): void {
  const m = JSON.parse(readFileSync(markerOf(dir), 'utf8'));
  writeFileSync(markerOf(dir), JSON.stringify({ ...m, ...change }));
}

/** A Python 3.10 (too old for AIPerf, fine for ai-dynamo) first on PATH: the newer names there answer nothing. */
function python310Bin(dir: string): string {
  const bin = join(dir, 'py310');
  mkdirSync(bin, { recursive: true });
  const script = readFileSync(join(SETUP_BIN, 'python3.13'), 'utf8').replaceAll('3.13.0', '3.10.14').replaceAll('python3.13', 'python3.10');
  writeFileSync(join(bin, 'python3.10'), script, { mode: 0o755 });
  copyFileSync(join(SETUP_BIN, 'fake-env-python'), join(bin, 'fake-env-python'));
  chmodSync(join(bin, 'fake-env-python'), 0o755);
  // python3 stays the real one: the fake environment's interpreter runs it for anything but pip (and 3.10 is asked before it).
  for (const n of ['python3.13', 'python3.12', 'python3.11']) writeFileSync(join(bin, n), '#!/bin/sh\nexit 127\n', { mode: 0o755 });
  return bin;
}

describe('a folder of ours made for something else is refused, named, and left as it is', () => {
  const cases: [string, Record<string, unknown>, Partial<SetupInput>, string][] = [
    ['another release', { release: '1.3.1' }, {}, 'ai-dynamo 1.3.1 (mocker)'],
    ['another engine', { engine: 'vllm' }, {}, 'ai-dynamo 1.6.1 (vllm)'],
    ['the CPU build, asked for the default device', { device: 'cpu' }, {}, 'ai-dynamo 1.6.1 (mocker)'],
  ];
  for (const [what, change, ask, holds] of cases) {
    it(`${what}: UserError naming what it holds, with --dry-run too; the marker is not rewritten`, async () => {
      const w = world();
      const dir = join(w.h.dir, 'ours');
      expect((await setup(w.env, { dir })).code).toBe(0);
      editMarker(dir, change);
      const marker = readFileSync(markerOf(dir), 'utf8');
      for (const dryRun of [false, true]) {
        const err = await refused(w.env, { dir, dryRun, ...ask });
        expect(err.message).toBe(`--dir ${dir} already holds ${holds}; choose another folder, or remove it first (rm -rf ${dir})`);
      }
      expect(readFileSync(markerOf(dir), 'utf8')).toBe(marker);
      expect(existsSync(join(dir, 'bin', 'python'))).toBe(true);
    });
  }

  it('a marker whose interpreter is gone: refused as ours but broken, nothing rebuilt over it', async () => {
    const w = world();
    const dir = join(w.h.dir, 'ours');
    expect((await setup(w.env, { dir })).code).toBe(0);
    rmSync(join(dir, 'bin', 'python'));
    const ranBefore = w.ran().length;
    const err = await refused(w.env, { dir });
    expect(err.message).toBe(`--dir ${dir} holds an environment setup made whose interpreter is missing; remove it first (rm -rf ${dir})`);
    expect(w.ran().slice(ranBefore).filter((l) => /-m venv|pip install/.test(l))).toEqual([]);
    expect(existsSync(markerOf(dir))).toBe(true);
  });

  it('the same in the default folder (no --dir given): the message names the environment folder, not a --dir the user never gave', async () => {
    const w = world();
    expect((await setup(w.env, { engine: 'mocker' })).code).toBe(0);
    rmSync(join(w.mocker, 'bin', 'python'));
    const err = await refused(w.env, { engine: 'mocker' });
    expect(err.message).toBe(`the environment folder ${w.mocker} holds an environment setup made whose interpreter is missing; remove it first (rm -rf ${w.mocker})`);
  });
});

describe('folders that are not ours, and a cache folder setup cannot use', () => {
  it('--dir holding someone\'s file: "give a new or empty folder", the file kept, nothing run', async () => {
    const w = world();
    const dir = join(w.h.dir, 'theirs');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const err = await refused(w.env, { dir });
    expect(err.message).toBe(`--dir ${dir} exists and is not an environment dynamo-dev setup made; give a new or empty folder`);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
    expect(w.ran()).toEqual([]);
  });

  it('the default folder holding someone\'s file: "remove it, or give --dir FOLDER", with --dry-run too', async () => {
    const w = world();
    mkdirSync(w.mocker, { recursive: true });
    writeFileSync(join(w.mocker, 'notes.txt'), 'mine');
    for (const dryRun of [false, true]) {
      const err = await refused(w.env, { dryRun });
      expect(err.message).toBe(`the environment folder ${w.mocker} exists and is not an environment dynamo-dev setup made; remove it, or give --dir FOLDER`);
    }
    expect(readdirSync(w.mocker)).toEqual(['notes.txt']);
  });

  it('envs/ a file: the default folder cannot be made; with XDG_CACHE_HOME set the way out names it', async () => {
    const w = world();
    mkdirSync(join(w.envs, '..'), { recursive: true });
    writeFileSync(w.envs, 'a file');
    const err = await refused(w.env);
    expect(err.message).toBe(`the environment folder ${w.mocker} cannot be made: ${w.envs} is a file, not a folder; give --dir FOLDER, or set XDG_CACHE_HOME to a folder`);
    expect(readFileSync(w.envs, 'utf8')).toBe('a file');
  });

  it('envs/ a file under HOME\'s cache (no XDG_CACHE_HOME): the way out is --dir alone', async () => {
    const w = world({ XDG_CACHE_HOME: undefined });
    const env = { ...w.env, HOME: w.h.dir };
    const envs = join(w.h.dir, '.cache', 'dynamo-dev', 'envs');
    mkdirSync(join(envs, '..'), { recursive: true });
    writeFileSync(envs, 'a file');
    const err = await refused(env);
    expect(err.message).toBe(`the environment folder ${join(envs, '1.6.1-mocker')} cannot be made: ${envs} is a file, not a folder; give --dir FOLDER`);
  });

  it('--dir below a file: refused as --dir ("give a new or empty folder"), not as the environment folder', async () => {
    const w = world();
    writeFileSync(join(w.h.dir, 'plain'), 'x');
    const dir = join(w.h.dir, 'plain', 'env');
    const err = await refused(w.env, { dir });
    expect(err.message).toBe(`--dir ${dir} cannot be made: ${join(w.h.dir, 'plain')} is a file, not a folder; give a new or empty folder`);
  });

  it('the cache folder a file: named by XDG_CACHE_HOME or HOME, with the fix', async () => {
    const w = world();
    writeFileSync(join(w.h.dir, 'cache'), '');
    mkdirSync(join(w.h.dir, 'cache2'));
    writeFileSync(join(w.h.dir, 'cache2', 'dynamo-dev'), 'x');
    const viaXdg = await refused({ ...w.env, XDG_CACHE_HOME: join(w.h.dir, 'cache2') });
    expect(viaXdg.message).toBe(`XDG_CACHE_HOME: setup's cache folder ${join(w.h.dir, 'cache2', 'dynamo-dev')} is a file, not a folder; it keeps environments and setup locks there`);
    expect(viaXdg.fix).toBe('set XDG_CACHE_HOME to a folder you can write (setup uses $XDG_CACHE_HOME/dynamo-dev)');
    mkdirSync(join(w.h.dir, 'home', '.cache'), { recursive: true });
    writeFileSync(join(w.h.dir, 'home', '.cache', 'dynamo-dev'), 'x');
    const viaHome = await refused({ ...w.env, XDG_CACHE_HOME: undefined, HOME: join(w.h.dir, 'home') });
    expect(viaHome.message).toBe(`HOME: setup's cache folder ${join(w.h.dir, 'home', '.cache', 'dynamo-dev')} is a file, not a folder; it keeps environments and setup locks there`);
  });
});

describe('what stops a build before or during it', () => {
  it('no Python 3.10-3.13 on PATH: exit 1, what was tried, nothing made', async () => {
    const w = world();
    const empty = join(w.h.dir, 'empty-bin');
    mkdirSync(empty);
    const r = await setup({ ...w.env, PATH: empty });
    expect(r.code).toBe(1);
    expect(r.one('python')).toEqual({ event: 'python', found: null, tried: ['python3.13: not found', 'python3.12: not found', 'python3.11: not found', 'python3.10: not found', 'python3: not found'] });
    expect(r.one('no-python')!.cause).toBe('no Python 3.10-3.13 on PATH (ai-dynamo needs one; tried python3.13: not found, python3.12: not found, python3.11: not found, python3.10: not found, python3: not found)');
    expect(r.names.at(-1)).toBe('no-python');
    expect(existsSync(w.mocker)).toBe(false);
  });

  it('the folder locked by another setup: busy names its pid and the lock, exit 1, nothing built', async () => {
    const w = world();
    mkdirSync(w.envs, { recursive: true });
    const lock = lockFolder(w.mocker, w.env);
    expect(lock.ok).toBe(true);
    try {
      const r = await setup(w.env);
      expect(r.code).toBe(1);
      expect(r.one('busy')).toEqual({
        event: 'busy', lock: lock.path, durationMs: expect.any(Number),
        cause: `another dynamo-dev setup (pid ${process.pid}) is building ${w.mocker}; wait for it to finish`,
        fix: `if no setup is running (\`ps -p ${process.pid} -o args=\` shows another program), remove the lock: rm ${lock.path}`,
      });
      expect(r.names).not.toContain('tools');
      expect(existsSync(w.mocker)).toBe(false);
    } finally {
      if (lock.ok) lock.release();
    }
  });

  it('an earlier setup gone but its installer still running: busy says so and how to stop it, the lock left as it was', async () => {
    const w = world();
    const lockPath = setupLockPath(w.env, w.mocker);
    mkdirSync(join(lockPath, '..'), { recursive: true });
    // The setup that wrote it: this pid with another start time (gone, its pid reused); its
    // installer: this very process (still running). Nothing here is signalled, only named.
    const me = readStatSync(process.pid)!.startTicks;
    const record = `${JSON.stringify({ pid: process.pid, startTicks: me + 1, dir: w.mocker, installer: { pid: process.pid, startTicks: me } })}\n`;
    writeFileSync(lockPath, record);
    const r = await setup(w.env);
    expect(r.code).toBe(1);
    expect(r.one('busy')).toEqual({
      event: 'busy', lock: lockPath, durationMs: expect.any(Number),
      cause: `an earlier setup of ${w.mocker} was stopped while its installer (pid ${process.pid}) still runs and writes into it; nothing was removed`,
      fix: `stop it: kill -- -${process.pid}, then run setup again`,
    });
    expect(readFileSync(lockPath, 'utf8')).toBe(record);
    expect(existsSync(w.mocker)).toBe(false);
  });

  it('an install that fails: exit 1, failed (not interrupted) with the step; the next setup builds it again and says so', async () => {
    const w = world();
    const r = await setup({ ...w.env, FAKE_PIP: 'fail' });
    expect(r.code).toBe(1);
    const f = r.one('failed')!;
    expect(f).toMatchObject({ code: 1, interrupted: false, step: 'install', dir: w.mocker, log: join(w.mocker, 'setup.log') });
    expect(f.cause).not.toContain('nothing was marked complete');
    expect(f.tail.join('\n')).toContain('No matching distribution found for ai-dynamo==1.6.1');
    expect(r.names).not.toContain('ready');
    expect(existsSync(markerOf(w.mocker))).toBe(false);
    const again = await setup(w.env);
    expect(again.code).toBe(0);
    expect(again.one('tools')!.again).toBe(true);
    expect(again.one('ready')!.made.already).toBe(false);
  });
});

describe('a Python too old for AIPerf', () => {
  it('setup: Dynamo made from 3.10, AIPerf said not installed with the interpreter and its version, exit 0', async () => {
    const w = world();
    const bin = python310Bin(w.h.dir);
    const r = await setup({ ...w.env, PATH: [bin, w.env.PATH].join(delimiter) });
    expect(r.code).toBe(0);
    expect(r.one('python')!.found).toEqual({ path: join(bin, 'python3.10'), version: '3.10.14' });
    expect(r.one('aiperf')).toEqual({ event: 'aiperf', ok: false, cause: `AIPerf (for bench) needs Python 3.11-3.13; ${join(bin, 'python3.10')} is 3.10.14: not installed` });
    expect(r.names).not.toContain('aiperf-installing');
    expect(existsSync(w.aiperf)).toBe(false);
  });

  it('--dry-run: the plan says AIPerf would need another Python', async () => {
    const w = world();
    const bin = python310Bin(w.h.dir);
    const r = await setup({ ...w.env, PATH: [bin, w.env.PATH].join(delimiter) }, { dryRun: true });
    expect(r.code).toBe(0);
    expect(r.one('plan')!.aiperf).toEqual({ state: 'python-too-old', python: { path: join(bin, 'python3.10'), version: '3.10.14' } });
  });
});

describe('--dry-run: the exact commands, nothing run or made', () => {
  it('nothing there yet: venv, install, verify; the placeholder fallback; AIPerf\'s three commands; no folder, no lock, no log', async () => {
    const w = world();
    const r = await setup(w.env, { dryRun: true });
    expect(r.code).toBe(0);
    expect(r.names).toEqual(['machine', 'python', 'choice', 'plan']);
    const p = r.one('plan')!;
    const py = join(w.mocker, 'bin', 'python');
    expect(p).toMatchObject({ release: '1.6.1', engine: 'mocker', dir: w.mocker, installer: 'pip', uv: null, existing: null, python: { path: join(SETUP_BIN, 'python3.13'), version: '3.13.0' } });
    expect(p.durationMs).toBeGreaterThanOrEqual(0);
    expect(p.steps.map((s) => [s.id, s.command])).toEqual([
      ['venv', `${join(SETUP_BIN, 'python3.13')} -m venv ${w.mocker}`],
      ['install', `${py} -m pip install ai-dynamo==1.6.1`],
      ['verify', `${py} -c 'import dynamo.frontend, dynamo.mocker'`],
    ]);
    expect(p.fallback).toEqual({
      placeholder: 'aisimulate==0.13.0',
      when: 'if aisimulate==0.13.0 (a placeholder that downloads from NVIDIA\'s index) cannot be fetched, step 2 becomes ai-dynamo alone, then its other pinned requirements without it (written to requirements-without-placeholder.txt):',
      steps: [
        { id: 'install-dynamo', argv: [py, '-m', 'pip', 'install', '--no-deps', 'ai-dynamo==1.6.1'], command: `${py} -m pip install --no-deps ai-dynamo==1.6.1` },
        expect.objectContaining({ id: 'install-requirements', command: `${py} -m pip install -r ${join(w.mocker, 'requirements-without-placeholder.txt')}` }),
      ],
    });
    const apy = join(w.aiperf, 'bin', 'python');
    expect(p.aiperf).toEqual({
      state: 'would-install', dir: w.aiperf, version: '0.13.0',
      commands: [`${join(SETUP_BIN, 'python3.13')} -m venv ${w.aiperf}`, `${apy} -m pip install aiperf==0.13.0`, `${apy} -m aiperf --version`],
    });
    expect(w.ran().filter((l) => /-m venv|pip install/.test(l))).toEqual([]);
    expect(existsSync(w.mocker)).toBe(false);
    expect(existsSync(w.aiperf)).toBe(false);
  });

  it('an environment complete: existing named, the commands that built it, AIPerf ready; nothing run again', async () => {
    const w = world();
    expect((await setup(w.env)).code).toBe(0);
    const ranBefore = w.ran().length;
    const r = await setup(w.env, { dryRun: true });
    expect(r.code).toBe(0);
    // A complete environment asks no Python for the choice: no 'python' event before the plan.
    expect(r.names).toEqual(['machine', 'choice', 'plan']);
    const p = r.one('plan')!;
    expect(p.existing).toEqual({ release: '1.6.1', engine: 'mocker' });
    expect(p.steps.map((s) => s.id)).toEqual(['venv', 'install', 'verify']);
    expect(p.aiperf).toEqual({ state: 'ready', dir: w.aiperf, version: '0.13.0' });
    expect(w.ran().slice(ranBefore).filter((l) => /-m venv|pip install/.test(l))).toEqual([]);
  });

  it('--device cpu: the venv first, then the CPU build\'s steps, and no placeholder fallback', async () => {
    const w = world();
    const r = await setup(w.env, { dryRun: true, device: 'cpu' });
    expect(r.code).toBe(0);
    const p = r.one('plan')!;
    const dir = join(w.envs, '1.6.1-vllm-cpu');
    expect(p).toMatchObject({ engine: 'vllm', dir, fallback: null });
    expect(p.steps[0].command).toBe(`${join(SETUP_BIN, 'python3.13')} -m venv ${dir}`);
    expect(p.steps.map((s) => s.command)).toContain(`${join(dir, 'bin', 'python')} -m pip install uv==0.13.9`);
    expect(p.steps.at(-1)!.command).toBe(`${join(dir, 'bin', 'python')} -c 'import dynamo.frontend, dynamo.mocker, dynamo.vllm, vllm'`);
    expect(existsSync(dir)).toBe(false);
  });

  it('a GPU machine: its GPUs and compute capability said and used for the choice', async () => {
    const w = world({}, { gpu: 'desktop-595' });
    const r = await setup(w.env, { dryRun: true, engine: 'mocker' });
    expect(r.code).toBe(0);
    expect(r.one('machine')).toEqual({
      event: 'machine', noGpu: null,
      gpu: { driverVersion: '595.71.05', cudaVersion: '13.2', computeCaps: ['8.9'], gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4080 SUPER', computeCap: '8.9' }] },
    });
    expect(r.one('choice')).toMatchObject({ release: '1.6.1', engine: 'mocker', device: 'gpu', computeCap: '8.9' });
  });
});
