import { execFileSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { records, upHarness } from '../helpers/up-run.js';

// Issue 29's property: no command removes or overwrites a path it did not create. Foreign things
// (a file, a folder holding a file, a symbolic link to a secret, a FIFO) are planted at every
// fixed path the commands touch that someone else can name or reach: setup's --dir and what sits
// beside it (uv.lock where setup's lock was DIR.lock), AIPerf's environment folder, bench show
// --plot's picture, export -o's manifest, a stored bench result, a run folder's stop-request.json
// (teardown of a foreground up). After each command every planted thing is exactly as it was
// (kind, content, link target, a folder's listing), the secret a link points to is untouched, and
// no command hangs on a FIFO. A regular file where a command was told to write (--plot FILE,
// export -o FILE --force) is the one thing replaced: the user asked for it.

const newHome = tempHomes('dd-foreign-paths-');
const KINDS = ['file', 'folder', 'link', 'fifo'] as const;
type Kind = (typeof KINDS)[number];

function plant(path: string, kind: Kind, secret: string): void {
  if (kind === 'file') writeFileSync(path, 'foreign');
  else if (kind === 'folder') {
    mkdirSync(path);
    writeFileSync(join(path, 'inside'), 'foreign');
  } else if (kind === 'link') symlinkSync(secret, path);
  else execFileSync('mkfifo', [path]);
}

/** What is at a path, to compare before and after: kind, content or target, a folder's listing. */
function look(path: string, without: string[] = []): string {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return 'absent';
  if (st.isSymbolicLink()) return `link -> ${readlinkSync(path)}`;
  if (st.isFIFO()) return 'fifo';
  if (st.isDirectory()) return `folder [${readdirSync(path).filter((n) => !without.includes(n)).sort().map((n) => `${n}: ${look(join(path, n))}`).join(', ')}]`;
  return `file ${readFileSync(path, 'utf8')}`;
}

function world() {
  const h = newHome();
  const secret = join(h.dir, 'secret');
  writeFileSync(secret, 'keep');
  const base = fakeEnv(h);
  const env = { ...base, PATH: [join(FIXTURES, 'bin', 'setup'), base.PATH].join(delimiter), FAKE_SETUP_FIXTURES: FIXTURES, XDG_CACHE_HOME: join(h.dir, 'cache'), LANG: 'C.UTF-8' };
  return { h, secret, env };
}

describe('setup', () => {
  it.each(KINDS)('a %s as --dir, and beside --dir at DIR.lock (uv.lock\'s place): untouched by setup and setup --dry-run', async (kind) => {
    const { h, secret, env } = world();
    const project = join(h.dir, 'project');
    mkdirSync(project);
    plant(join(project, 'taken'), kind, secret);
    plant(join(project, 'uv.lock'), kind, secret);
    const before = look(project);
    for (const args of [['--dir', join(project, 'taken'), '--dry-run'], ['--dir', join(project, 'taken')], ['--dir', join(project, 'uv'), '--dry-run']]) {
      const r = await runCli(['setup', ...args], env, { timeoutMs: 20_000 });
      expect([args, r.code]).toEqual([args, args[1].endsWith('taken') ? 2 : 0]);
    }
    const built = await runCli(['setup', '--dir', join(project, 'uv')], env, { timeoutMs: 60_000 });
    expect(built.code, built.stderr).toBe(0);
    // Only what setup made is new: the uv folder.
    expect(look(project, ['uv'])).toBe(before);
    expect(look(join(project, 'uv'))).toMatch(/^folder \[/);
    expect(readFileSync(secret, 'utf8')).toBe('keep');
  });

  it.each(KINDS)('a %s where AIPerf\'s environment goes (XDG_CACHE_HOME/dynamo-dev/envs/aiperf-0.13.0): refused with what to do, untouched', async (kind) => {
    const { h, secret, env } = world();
    const envs = join(h.dir, 'cache', 'dynamo-dev', 'envs');
    mkdirSync(envs, { recursive: true });
    plant(join(envs, 'aiperf-0.13.0'), kind, secret);
    const before = look(envs);
    const r = await runCli(['setup', '--dir', join(h.dir, 'env')], env, { timeoutMs: 60_000 });
    expect(r.stdout + r.stderr).toMatch(/aiperf-0\.13\.0/);
    expect(look(envs)).toBe(before);
    expect(readFileSync(secret, 'utf8')).toBe('keep');
  });
});

describe('bench show --plot', () => {
  it.each(KINDS.filter((k) => k !== 'file'))('a %s at the picture\'s path: refused, untouched (a regular file there is the picture asked for, replaced)', async (kind) => {
    const { h, secret, env } = world();
    cpSync(join(FIXTURES, 'bench', 'state'), h.stateDir, { recursive: true });
    const target = join(h.dir, 'plot.svg');
    plant(target, kind, secret);
    const before = look(h.dir);
    const r = await runCli(['bench', 'show', '20261205-101500-000-routing', '--plot', target], env, { timeoutMs: 20_000 });
    expect(r.code).toBe(2);
    expect(look(h.dir)).toBe(before);
    expect(readFileSync(secret, 'utf8')).toBe('keep');
  });
});

describe('export k8s -o', () => {
  it.each(KINDS)('a %s at the output path: refused without --force; with --force only a regular file is replaced', async (kind) => {
    const { h, secret, env } = world();
    const target = join(h.dir, 'dgd.yaml');
    plant(target, kind, secret);
    const before = look(h.dir);
    const r = await runCli(['export', 'k8s', 'agg', '--image', 'example/dynamo:1', '-o', target], env, { timeoutMs: 20_000 });
    expect(r.code).toBe(2);
    expect(look(h.dir)).toBe(before);
    const forced = await runCli(['export', 'k8s', 'agg', '--image', 'example/dynamo:1', '-o', target, '--force'], env, { timeoutMs: 20_000 });
    if (kind === 'file') {
      expect(forced.code, forced.stderr).toBe(0);
      expect(readFileSync(target, 'utf8')).toMatch(/^apiVersion: /m);
    } else {
      expect(forced.code).toBe(2);
      expect(look(h.dir)).toBe(before);
    }
    expect(readdirSync(h.dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(readFileSync(secret, 'utf8')).toBe('keep');
  });
});

describe('the state directory\'s stored results', () => {
  it.each(KINDS)('a %s as a stored result.json: bench show, list and compare leave it as it is', async (kind) => {
    const { h, secret, env } = world();
    cpSync(join(FIXTURES, 'bench', 'state'), h.stateDir, { recursive: true });
    const id = '20261205-101500-000-routing';
    const result = join(h.stateDir, 'bench', id, 'result.json');
    rmSync(result);
    plant(result, kind, secret);
    const before = look(join(h.stateDir, 'bench'));
    for (const args of [['bench', 'show', id], ['bench', 'list'], ['bench', 'compare', id, '20261205-110200-000-agg-vs-disagg'], ['bench', 'show', id, '--json']]) {
      const r = await runCli(args, env, { timeoutMs: 15_000 });
      expect([args, r.code === 0 || r.code === 2]).toEqual([args, true]);
    }
    expect(look(join(h.stateDir, 'bench'))).toBe(before);
    expect(readFileSync(secret, 'utf8')).toBe('keep');
  });
});

const up = upHarness('dd-foreign-run-');
afterEach(() => up.cleanup());

describe('a run folder\'s stop-request.json (teardown of a foreground up)', () => {
  it.each(KINDS.filter((k) => k !== 'file'))('a %s there: teardown stops the run, leaves it as it is and writes nothing through it', async (kind) => {
    const s = await up.setup();
    const secret = join(s.dir, 'secret');
    writeFileSync(secret, 'keep');
    const run = up.startUp(['up', 'agg', '--no-preflight', '--json', ...s.sets], s.env);
    await run.waitEvent((e) => e.event === 'ready', 30_000);
    const id = records(s.stateDir)[0].id;
    const path = join(s.stateDir, 'runs', id, 'stop-request.json');
    plant(path, kind, secret);
    const down = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout + down.stderr).toBe(0);
    expect((await run.exit).code).not.toBeNull();
    expect(look(path)).toBe(kind === 'link' ? `link -> ${secret}` : kind === 'fifo' ? 'fifo' : 'folder [inside: file foreign]');
    expect(readFileSync(secret, 'utf8')).toBe('keep');
  });
});
