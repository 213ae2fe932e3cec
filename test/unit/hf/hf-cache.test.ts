import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdersOf, probeHfModel } from '../../../src/host/hf/hf-cache.js';
import { parseProcLocks } from '../../../src/host/procs/parse-proc.js';
import { killChildren } from '../../helpers/children.js';

const MODEL = 'Qwen/Qwen3-0.6B';
const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();

let root: string;
let cache: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dd-hf-'));
  cache = join(root, 'hub');
});

afterEach(async () => {
  await killChildren(children);
  rmSync(root, { recursive: true, force: true });
});

/** A cached model as huggingface_hub lays it out. */
function cacheModel(): string {
  const dir = join(cache, 'models--Qwen--Qwen3-0.6B');
  mkdirSync(join(dir, 'refs'), { recursive: true });
  mkdirSync(join(dir, 'blobs'), { recursive: true });
  mkdirSync(join(dir, 'snapshots', 'c1899de289a04d12100db370d81485cdf75e47ca'), { recursive: true });
  writeFileSync(join(dir, 'refs', 'main'), 'c1899de289a04d12100db370d81485cdf75e47ca');
  writeFileSync(join(dir, 'snapshots', 'c1899de289a04d12100db370d81485cdf75e47ca', 'config.json'), '{"num_hidden_layers": 28}');
  return dir;
}

function lockFile(name = 'a6e0b3bc1d16fb1a5aff0b8b6bbd9d87e2bd3a4f.lock'): string {
  const dir = join(cache, '.locks', 'models--Qwen--Qwen3-0.6B');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, '');
  return path;
}

/** A child holding flock(LOCK_EX) on path, as filelock does; resolves once the lock is taken. */
async function holdLock(path: string): Promise<ChildProcess> {
  const code = 'import fcntl, sys\nf = open(sys.argv[1], "a")\nfcntl.flock(f, fcntl.LOCK_EX)\nprint("locked", flush=True)\nsys.stdin.read()\n';
  const child = spawn(PYTHON, ['-c', code, path], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  expect(line).toBe('locked');
  return child;
}

describe('probeHfModel', () => {
  it('reports a model that is not cached', async () => {
    const f = await probeHfModel(MODEL, { HF_HUB_CACHE: cache });
    expect(f).toMatchObject({ cacheRoot: cache, model: MODEL, modelDir: null, snapshot: null, configPath: null, locks: [], incompleteBlobs: [], locksUnknown: false });
  });

  it('finds the snapshot from refs/main and its config.json (HF_HOME/hub layout)', async () => {
    cache = join(root, 'hf', 'hub');
    const dir = cacheModel();
    const f = await probeHfModel(MODEL, { HF_HOME: join(root, 'hf') });
    expect(f.modelDir).toBe(dir);
    expect(f.snapshot).toBe('c1899de289a04d12100db370d81485cdf75e47ca');
    expect(f.configPath).toBe(join(dir, 'snapshots', 'c1899de289a04d12100db370d81485cdf75e47ca', 'config.json'));
  });

  it('names the pid holding a REAL flock on the model\'s lock file, with its command', async () => {
    cacheModel();
    const path = lockFile();
    const child = await holdLock(path);
    const f = await probeHfModel(MODEL, { HF_HUB_CACHE: cache });
    expect(f.locks).toHaveLength(1);
    expect(f.locks[0].path).toBe(path);
    expect(f.locks[0].holders).toEqual([{ pid: child.pid, cmd: expect.stringContaining(path) }]);
    expect(f.locks[0].holders[0].cmd).toMatch(/^\S*python\S* -c /);
  });

  it('reports an unheld lock file (left after release) with no holders', async () => {
    cacheModel();
    const path = lockFile();
    const child = await holdLock(path);
    child.stdin!.end(); // releases: the process exits, the file stays (filelock may keep it)
    await once(child, 'exit');
    const f = await probeHfModel(MODEL, { HF_HUB_CACHE: cache });
    expect(f.locks).toEqual([{ path, holders: [], mtimeMs: expect.any(Number) }]);
  });

  it('does not take a lock on another file of the same folder for this one', async () => {
    cacheModel();
    const held = lockFile('held.lock');
    const free = lockFile('free.lock');
    const child = await holdLock(held);
    const f = await probeHfModel(MODEL, { HF_HUB_CACHE: cache });
    expect(Object.fromEntries(f.locks.map((l) => [l.path, l.holders.map((h) => h.pid)]))).toEqual({ [free]: [], [held]: [child.pid] });
  });

  it('lists .incomplete blobs with size and mtime', async () => {
    const dir = cacheModel();
    const blob = join(dir, 'blobs', 'f47f71177f32bcd101b7573ec9171e6a57f4f4d31148d38e382306f42996874b.incomplete');
    writeFileSync(blob, Buffer.alloc(4096));
    utimesSync(blob, new Date('2026-11-30T09:00:00Z'), new Date('2026-11-30T09:00:00Z'));
    const f = await probeHfModel(MODEL, { HF_HUB_CACHE: cache });
    expect(f.incompleteBlobs).toEqual([{ path: blob, sizeBytes: 4096, mtimeMs: Date.parse('2026-11-30T09:00:00Z') }]);
  });

  it('checks no locks for a local model path', async () => {
    mkdirSync(join(root, 'm'));
    writeFileSync(join(root, 'm', 'config.json'), '{}');
    const f = await probeHfModel(join(root, 'm'), { HF_HUB_CACHE: cache });
    expect(f).toMatchObject({ modelDir: join(root, 'm'), configPath: join(root, 'm', 'config.json'), locks: [], locksUnknown: false });
  });
});

describe('holdersOf', () => {
  it('matches /proc/locks MAJOR:MINOR:INODE against a stat dev/ino, ignoring waiters', () => {
    const locks = parseProcLocks('1: FLOCK  ADVISORY  WRITE 2001 08:01:7864554 0 EOF\n1: -> FLOCK  ADVISORY  WRITE 2002 08:01:7864554 0 EOF\n2: FLOCK  ADVISORY  WRITE 2003 08:02:7864554 0 EOF\n');
    expect(holdersOf(locks, { dev: 0x801n, ino: 7864554n })).toEqual([2001]);
    expect(holdersOf(locks, { dev: 0x801n, ino: 1n })).toEqual([]);
  });
});
