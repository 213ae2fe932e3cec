import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnLogged, type Spawned } from '../../../src/run/spawn.js';
import { readStartTicks, readStat } from '../../../src/run/proc.js';

// How `up` starts each process (src/run/spawn.ts), on real short-lived processes: its own process
// group, output appended to its log through inherited descriptors, and every way a start can fail
// told in the log and in the exit info.

const dirs: string[] = [];
const started: Spawned[] = [];
afterEach(() => {
  for (const s of started.splice(0)) {
    if (s.pid === null) continue;
    try {
      process.kill(-s.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'dd-spawn-'));
  dirs.push(d);
  return d;
}

function run(argv: string[], env: NodeJS.ProcessEnv, log: string): Spawned {
  const s = spawnLogged(argv, env, log);
  started.push(s);
  return s;
}

const env = { PATH: process.env.PATH };
const processWraps = () => process.getActiveResourcesInfo().filter((r) => r === 'ProcessWrap').length;

describe('spawnLogged: a started process', () => {
  it('writes stdout and stderr into its log (created with its folders, earlier lines kept) and reports its exit code', async () => {
    const d = tmp();
    const log = join(d, 'runs', 'r1', 'logs', 'agg-0.log');
    const s = run(['sh', '-c', 'echo "to stdout"; echo "to stderr" >&2; exit 3'], env, log);
    expect(await s.exited).toEqual({ code: 3, signal: null, error: null });
    expect(readFileSync(log, 'utf8')).toBe('to stdout\nto stderr\n');
    const again = run(['sh', '-c', 'echo second run'], env, log);
    expect(await again.exited).toEqual({ code: 0, signal: null, error: null });
    expect(readFileSync(log, 'utf8')).toBe('to stdout\nto stderr\nsecond run\n');
  });

  it('gets exactly the environment it is given (nothing of ours leaks in), and no stdin', async () => {
    const log = join(tmp(), 'x.log');
    const s = run(['sh', '-c', 'echo "FOO=$FOO HOME=${HOME-unset}"; cat; echo "stdin closed"'], { ...env, FOO: 'bar' }, log);
    expect(await s.exited).toEqual({ code: 0, signal: null, error: null });
    expect(readFileSync(log, 'utf8')).toBe('FOO=bar HOME=unset\nstdin closed\n');
  });

  it('leads its own process group (one group signal reaches its children), and its pid, group and start time are recorded', async () => {
    const log = join(tmp(), 'x.log');
    const before = Date.now();
    const s = run(['sleep', '30'], env, log);
    expect(s.pid).toEqual(expect.any(Number));
    expect(s.pgid).toBe(s.pid);
    expect(readStat(s.pid!)!.pgid).toBe(s.pid);
    expect(readStat(s.pid!)!.session).toBe(s.pid); // setsid: not in our terminal's session either
    expect(s.startTicks).toBe(readStartTicks(s.pid!));
    expect(Date.parse(s.startedAt)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(s.startedAt)).toBeLessThanOrEqual(Date.now());
    process.kill(-s.pid!, 'SIGTERM');
    expect(await s.exited).toEqual({ code: null, signal: 'SIGTERM', error: null });
  });

  it('unref() lets `up --detach` exit while the process runs on', async () => {
    const log = join(tmp(), 'x.log');
    const base = processWraps();
    const s = run(['sleep', '30'], env, log);
    expect(processWraps()).toBe(base + 1);
    s.unref();
    expect(processWraps()).toBe(base);
    process.kill(-s.pid!, 'SIGKILL');
    expect(await s.exited).toMatchObject({ signal: 'SIGKILL' });
  });
});

describe('spawnLogged: a process that cannot start', () => {
  it('a program not on PATH: the log and the exit info both say so in words, no pid', async () => {
    const log = join(tmp(), 'logs', 'agg-0.log');
    const s = run(['no-such-program-dd', '--x'], env, log);
    expect(s.pid).toBeNull();
    expect(await s.exited).toEqual({ code: null, signal: null, error: 'cannot start no-such-program-dd: no such program (not found on PATH)' });
    expect(readFileSync(log, 'utf8')).toBe('dynamo-dev: cannot start no-such-program-dd: no such program (not found on PATH)\n');
  });

  it('a program that is there but not executable: the system\'s reason, not "not found"', async () => {
    const d = tmp();
    const prog = join(d, 'not-executable.sh');
    writeFileSync(prog, 'echo hi\n', { mode: 0o644 });
    const log = join(d, 'x.log');
    const s = run([prog], env, log);
    const exit = await s.exited;
    expect(exit).toEqual({ code: null, signal: null, error: `cannot start ${prog}: spawn ${prog} EACCES` });
    expect(readFileSync(log, 'utf8')).toBe(`dynamo-dev: cannot start ${prog}: spawn ${prog} EACCES\n`);
  });

  it('a start the system refuses outright (a NUL in the program name): told in the log, the run sees an exit with the error', async () => {
    const log = join(tmp(), 'x.log');
    const s = run(['bad\0name'], env, log);
    expect(s).toMatchObject({ pid: null, pgid: null, startTicks: null });
    const exit = await s.exited;
    expect(exit.code).toBeNull();
    expect(exit.signal).toBeNull();
    expect(exit.error).toMatch(/must be a string without null bytes/);
    expect(readFileSync(log, 'utf8')).toBe(`dynamo-dev: cannot start bad\0name: ${exit.error}\n`);
    expect(() => s.unref()).not.toThrow();
  });
});
