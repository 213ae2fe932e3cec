import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { startUp } from '../helpers/up-run.js';

// `dynamo-dev setup --dir` must never remove, write into or build over what it did not make
// (issue 29): an existing file, a project folder that merely holds a setup.log, a uv.lock beside
// the folder (the lock was DIR.lock), a FIFO where its marker would be. Its lock lives in a folder
// of its own; a stale lock of a reused pid is taken over; an installer left by a setup killed
// outright is never built under. The fake Python of setup.test.ts acts out the installs.

const home = tempHomes('dd-setup-safe-');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

function setupEnv(h: ReturnType<typeof home>, vars: Record<string, string | undefined> = {}) {
  const base = fakeEnv(h);
  return { ...base, PATH: [join(FIXTURES, 'bin', 'setup'), base.PATH].join(delimiter), FAKE_SETUP_FIXTURES: FIXTURES, FAKE_SETUP_LOG: join(h.dir, 'commands.log'), XDG_CACHE_HOME: join(h.dir, 'cache'), ...vars };
}
const envDir = (h: ReturnType<typeof home>) => join(h.dir, 'cache', 'dynamo-dev', 'envs', '1.6.1-mocker');
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Every file under a folder with its content (links as their target, FIFOs as "fifo"). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[p] = readFileSync(p, 'utf8');
      else if (e.isSymbolicLink()) out[p] = 'link';
      else out[p] = 'other';
    }
  };
  walk(dir);
  return out;
}

describe('setup --dir refuses what is not its own, --dry-run too: exit 2, one line naming --dir and what is valid, nothing touched', () => {
  it('a regular file, a project folder holding a setup.log, a symbolic link, a FIFO, a folder whose marker is a FIFO', async () => {
    const h = home();
    const file = join(h.dir, 'notes.txt');
    writeFileSync(file, 'my notes');
    const project = join(h.dir, 'project');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'README.md'), '# mine');
    writeFileSync(join(project, 'src', 'main.py'), 'print(1)');
    writeFileSync(join(project, 'setup.log'), 'my own build log');
    const link = join(h.dir, 'link');
    mkdirSync(join(h.dir, 'target'));
    writeFileSync(join(h.dir, 'target', 'keep'), 'k');
    symlinkSync(join(h.dir, 'target'), link);
    const fifo = join(h.dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const fifoMarker = join(h.dir, 'fifo-marker');
    mkdirSync(fifoMarker);
    execFileSync('mkfifo', [join(fifoMarker, 'dynamo-dev-setup.json')]);
    const before = snapshot(h.dir);

    const cases: [string, string][] = [
      [file, 'is a file, not a folder'],
      [project, 'exists and is not an environment dynamo-dev setup made'],
      [link, 'is a symbolic link'],
      [fifo, 'is not a folder (a pipe, socket or device)'],
      [fifoMarker, 'exists and is not an environment dynamo-dev setup made'],
    ];
    for (const [dir, why] of cases) {
      for (const dry of [[], ['--dry-run']]) {
        const r = await runCli(['setup', '--dir', dir, ...dry], setupEnv(h), { timeoutMs: 10_000 });
        expect([dir, dry, r.code, r.stderr]).toEqual([dir, dry, 2, `dynamo-dev: --dir ${dir} ${why}; give a new or empty folder`]);
      }
    }
    expect(snapshot(h.dir)).toEqual(before);
    expect(existsSync(join(h.dir, 'commands.log')) && readFileSync(join(h.dir, 'commands.log'), 'utf8').includes('venv')).toBe(false);
    // Ten commands: vitest's default 30 s was a wall-clock bound this test does not mean (timed out at load 12).
  }, 120_000);

  it('a folder that cannot be made (under /proc, under a file) or an XDG_CACHE_HOME that is a file: one line, no raw errno', async () => {
    const h = home();
    const proc = await runCli(['setup', '--dir', '/proc/x'], setupEnv(h));
    expect(proc.code).toBe(2);
    // root may write in /proc by its mode bits, yet no folder can be made there: said as such, for root and others alike.
    expect(proc.stderr).toMatch(/^dynamo-dev: --dir \/proc\/x cannot be made: \/proc (is on the kernel's proc file system, which holds no folders of ours|is not writable \(EACCES: permission denied\)); give a new or empty folder$/);
    const file = join(h.dir, 'a-file');
    writeFileSync(file, 'x');
    const under = await runCli(['setup', '--dir', join(file, 'env')], setupEnv(h));
    expect([under.code, under.stderr]).toEqual([2, `dynamo-dev: --dir ${join(file, 'env')} cannot be made: ${file} is a file, not a folder; give a new or empty folder`]);
    // With --dir too (setup's locks live there: before, `ENOTDIR: not a directory, mkdir '.../setup-locks'` after the
    // machine and choice lines, and --dry-run printed commands into it, exit 0).
    const xdgLine = `dynamo-dev: XDG_CACHE_HOME: setup's cache folder ${join(file, 'dynamo-dev')} cannot be made: ${file} is a file, not a folder; it keeps environments and setup locks there\nfix: set XDG_CACHE_HOME to a folder you can write (setup uses $XDG_CACHE_HOME/dynamo-dev)`;
    for (const args of [[], ['--dry-run'], ['--dir', join(h.dir, 'env')], ['--dir', join(h.dir, 'env'), '--dry-run']]) {
      const xdg = await runCli(['setup', ...args], setupEnv(h, { XDG_CACHE_HOME: file }));
      expect([args, xdg.code, xdg.stderr, xdg.stdout]).toEqual([args, 2, xdgLine, '']);
    }
    expect(readFileSync(file, 'utf8')).toBe('x');
    expect(existsSync(join(h.dir, 'env'))).toBe(false);
  });
});

describe('setup builds beside what is not its own without touching it', () => {
  it('--dir ./uv in a project holding uv.lock (and poetry.lock, Cargo.lock): built, every lock file kept; setup\'s own lock lives under dynamo-dev/setup-locks and is gone after', async () => {
    const h = home();
    const project = join(h.dir, 'project');
    mkdirSync(project);
    for (const [name, text] of [['uv.lock', 'version = 1\n'], ['poetry.lock', '# poetry\n'], ['Cargo.lock', '# cargo\n']]) writeFileSync(join(project, name), text);
    for (const name of ['uv', 'poetry', 'Cargo']) {
      const r = await runCli(['setup', '--dir', join(project, name)], setupEnv(h), { timeoutMs: 60_000 });
      expect([name, r.code, r.stderr]).toEqual([name, 0, '']);
    }
    expect(readFileSync(join(project, 'uv.lock'), 'utf8')).toBe('version = 1\n');
    expect(readFileSync(join(project, 'poetry.lock'), 'utf8')).toBe('# poetry\n');
    expect(readFileSync(join(project, 'Cargo.lock'), 'utf8')).toBe('# cargo\n');
    expect(readdirSync(join(h.dir, 'cache', 'dynamo-dev', 'setup-locks'))).toEqual([]);
  });

  it('an empty folder given: built in it; a failed build leaves it marked as ours, and the next setup builds it again', async () => {
    const h = home();
    const dir = join(h.dir, 'empty');
    mkdirSync(dir);
    const failed = await runCli(['setup', '--dir', dir], setupEnv(h, { FAKE_PIP: 'fail' }), { timeoutMs: 60_000 });
    expect(failed.code).toBe(1);
    expect(readdirSync(dir)).toContain('.dynamo-dev-setup-owner');
    const again = await runCli(['setup', '--dir', dir], setupEnv(h), { timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('installing: again (an earlier setup did not complete)');
    // up does not search a --dir environment: the next command it prints names its python.
    expect(again.stdout).toContain(`  next    dynamo-dev up mocker --python ${join(dir, 'bin', 'python')}`);
  });
});

describe('setup\'s lock', () => {
  it('a stale lock naming a pid now used by another process (pid 1, another start time) is taken over; a live setup\'s lock is said with a fix line naming the lock', async () => {
    const h = home();
    const dir = envDir(h);
    const lockDir = join(h.dir, 'cache', 'dynamo-dev', 'setup-locks');
    // The lock a setup of this folder takes: find its name by holding it with a hanging install.
    const pidFile = join(h.dir, 'pip.pid');
    const run = startUp(['setup', '--json'], setupEnv(h, { FAKE_PIP: 'hang', FAKE_PIP_PID: pidFile }), children);
    await run.waitEvent((e) => e.event === 'progress' && e.id === 'install');
    const [lockName] = readdirSync(lockDir);
    const held = await runCli(['setup'], setupEnv(h));
    expect(held.code).toBe(1);
    expect(held.stderr).toBe(`dynamo-dev: another dynamo-dev setup (pid ${run.child.pid}) is building ${dir}; wait for it to finish\nfix: if no setup is running (\`ps -p ${run.child.pid} -o args=\` shows another program), remove the lock: rm ${join(lockDir, lockName)}`);
    run.child.kill('SIGINT');
    expect((await run.exit).code).toBe(130);

    // pid 1 is alive, but it is not the setup that wrote this lock (another start time).
    writeFileSync(join(lockDir, lockName), `${JSON.stringify({ pid: 1, startTicks: 1, dir, installer: null })}\n`);
    const taken = await runCli(['setup'], setupEnv(h), { timeoutMs: 60_000 });
    expect(taken.code, taken.stderr).toBe(0);
    expect(readdirSync(lockDir)).toEqual([]);
  });

  it('setup SIGKILLed while pip runs: the next setup removes nothing while that pip still writes into the folder, says its pid and how to stop it; once stopped, the folder is built again', async () => {
    const h = home();
    const dir = envDir(h);
    const pidFile = join(h.dir, 'pip.pid');
    const killed = startUp(['setup', '--json'], setupEnv(h, { FAKE_PIP: 'hang', FAKE_PIP_PID: pidFile }), children);
    await killed.waitEvent((e) => e.event === 'progress' && e.id === 'install');
    const pip = Number(readFileSync(pidFile, 'utf8'));
    // Once the fake pip has printed all it prints (it then execs sleep), killing setup cannot
    // end it by SIGPIPE: it lives on, as a real download does.
    while (readFileSync(`/proc/${pip}/comm`, 'utf8').trim() !== 'sleep') await new Promise((r) => setTimeout(r, 10));
    killed.child.kill('SIGKILL');
    await killed.exit;
    expect(alive(pip)).toBe(true);
    writeFileSync(join(dir, 'written-by-the-left-pip'), 'x');
    const before = snapshot(dir);

    const again = await runCli(['setup'], setupEnv(h), { timeoutMs: 20_000 });
    expect(again.code, again.stdout + again.stderr).toBe(1);
    // The fake pip is its step's process group leader (setup starts each step in a group of its own).
    expect(again.stderr).toBe(`dynamo-dev: an earlier setup of ${dir} was stopped while its installer (pid ${pip}) still runs and writes into it; nothing was removed\nfix: stop it: kill -- -${pip}, then run setup again`);
    expect(snapshot(dir)).toEqual(before);

    process.kill(-pip, 'SIGKILL');
    while (alive(pip)) await new Promise((r) => setTimeout(r, 20));
    const built = await runCli(['setup'], setupEnv(h), { timeoutMs: 60_000 });
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout).toContain('installing: again (an earlier setup did not complete)');
    expect(existsSync(join(dir, 'written-by-the-left-pip'))).toBe(false);
  });
});
