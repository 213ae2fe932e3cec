import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { engineProcesses } from '../../../src/host/procs/engine-procs.js';
import { listProcesses } from '../../../src/host/procs/processes.js';
import { killChildren } from '../../helpers/children.js';

// The real interpreter, not a pyenv/asdf shim that would exec it later (the command line would change under us).
const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();

const children: ChildProcess[] = [];
const dirs: string[] = [];

/** Spawns a child and resolves once it has exec'd (its command line is final). */
async function start(cmd: string, args: string[], opts: { argv0?: string; env?: NodeJS.ProcessEnv; detached?: boolean } = {}): Promise<ChildProcess> {
  const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'ignore'], ...opts });
  children.push(child);
  await once(child, 'spawn');
  return child;
}

afterEach(async () => {
  await killChildren(children);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('listProcesses on this machine', () => {
  it('finds a real process titled VLLM::EngineCore with pid, pgid, start ticks, user and age', async () => {
    // argv0 replaces argv[0] at exec, exactly where setproctitle puts vLLM's title.
    const child = await start('sleep', ['300'], { argv0: 'VLLM::EngineCore', detached: true });
    const procs = await listProcesses();
    const engines = engineProcesses(procs);
    const mine = engines.find((p) => p.pid === child.pid);
    expect(mine).toBeDefined();
    expect(mine!.kind).toBe('vllm-engine');
    expect(mine!.cmd).toBe('VLLM::EngineCore 300');
    expect(mine!.ppid).toBe(process.pid);
    expect(mine!.pgid).toBe(child.pid); // its own process group, as the supervisor starts them
    expect(mine!.startTicks).toBeGreaterThan(0);
    expect(mine!.uid).toBe(process.getuid!());
    expect(mine!.user).toBeTruthy();
    expect(mine!.ageMs).not.toBeNull();
    expect(mine!.ageMs!).toBeGreaterThanOrEqual(0);
    expect(mine!.ageMs!).toBeLessThan(60_000);
  });

  it('finds a real `python3 -m dynamo.frontend` as a Dynamo process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dd-procs-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'dynamo'));
    writeFileSync(join(dir, 'dynamo', '__init__.py'), '');
    writeFileSync(join(dir, 'dynamo', 'frontend.py'), 'import sys\nsys.stdin.read()\n');
    const child = await start(PYTHON, ['-m', 'dynamo.frontend', '--http-port', '8000'], { env: { ...process.env, PYTHONPATH: dir } });
    const mine = engineProcesses(await listProcesses()).find((p) => p.pid === child.pid);
    expect(mine?.kind).toBe('dynamo');
    expect(mine?.cmd).toBe(`${PYTHON} -m dynamo.frontend --http-port 8000`);
  });

  it('does not flag an editor-like process with vllm/core.py in its arguments', async () => {
    const child = await start(PYTHON, ['-c', 'import sys; sys.stdin.read()', 'vllm/v1/engine/core.py', 'VLLM::EngineCore'], { argv0: 'vim' });
    const procs = await listProcesses();
    const seen = procs.find((p) => p.pid === child.pid);
    expect(seen?.cmd).toBe('vim -c import sys; sys.stdin.read() vllm/v1/engine/core.py VLLM::EngineCore');
    expect(engineProcesses(procs).some((p) => p.pid === child.pid)).toBe(false);
  });

  it('survives processes exiting during the scan', async () => {
    // A burst of short-lived processes: some are listed by ps and gone before /proc is read.
    const burst = Array.from({ length: 20 }, () => start('true', []));
    const [procs] = await Promise.all([listProcesses(), ...burst]);
    expect(procs.find((p) => p.pid === process.pid)?.cmd).toContain('node');
    expect(procs.every((p) => Number.isInteger(p.pid) && typeof p.cmd === 'string')).toBe(true);
  });
});

describe('listProcesses reads details on first ask', () => {
  it('a listed process that exits keeps its command line; what was asked before stays, the rest reads null', async () => {
    const asked = await start('sleep', ['300'], { argv0: 'VLLM::EngineCore' });
    const unasked = await start('sleep', ['301'], { argv0: 'VLLM::EngineCore' });
    const procs = await listProcesses();
    const a = procs.find((p) => p.pid === asked.pid)!;
    const u = procs.find((p) => p.pid === unasked.pid)!;
    const ticks = a.startTicks;
    expect(ticks).toBeGreaterThan(0);
    for (const c of [asked, unasked]) {
      c.kill('SIGKILL');
      await once(c, 'exit');
    }
    expect(a.startTicks).toBe(ticks);
    expect(a.cmd).toBe('VLLM::EngineCore 300');
    expect(u.cmd).toBe('VLLM::EngineCore 301');
    expect([u.startTicks, u.pgid, u.ppid, u.ageMs]).toEqual([null, null, 0, null]);
    expect(engineProcesses([u])[0]).toMatchObject({ pid: unasked.pid, kind: 'vllm-engine', startTicks: null });
  });

  it('kernel threads read [comm] as in ps, and an entry serialises with every field', async () => {
    const procs = await listProcesses();
    const kthreadd = procs.find((p) => p.pid === 2);
    if (kthreadd) expect(kthreadd.cmd).toBe('[kthreadd]'); // absent inside a pid namespace
    const self = JSON.parse(JSON.stringify(procs.find((p) => p.pid === process.pid)));
    expect(Object.keys(self).sort()).toEqual(['ageMs', 'cmd', 'name', 'pgid', 'pid', 'ppid', 'startTicks', 'uid', 'user']);
    expect(self.ppid).toBe(process.ppid);
  });
});

describe('reading /proc files whole', () => {
  it('a command line longer than the read buffer (40 KiB of arguments) is read to its end', async () => {
    const long = 'x'.repeat(40 * 1024);
    // bash waits on its stdin (a pipe); its arguments past the script are only carried along.
    const child = await start('bash', ['-c', 'read line', 'name', long, 'end-marker']);
    const seen = (await listProcesses()).find((p) => p.pid === child.pid);
    expect(seen?.cmd).toBe(`bash -c read line name ${long} end-marker`);
  });
});
