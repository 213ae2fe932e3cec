import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { deadPid, writeFakeRun } from '../helpers/proc-trees.js';

// Issue 29: every read of a file we did not write is bounded in time and size. The readers here
// (each failed on 4c1bd45): a run's run.json (status: a link to a secret file printed its first
// bytes in the warning; now not followed, and a JSON error never quotes the text), a process's log
// for `logs` (a FIFO there blocked the open for good), and `aiperf` on PATH (its head was read
// whole and blocking: a FIFO named aiperf hung bench). Each command answers in one line naming the file.

const homes: ReturnType<typeof tempHome>[] = [];
function home() {
  const h = tempHome('dd-readers-');
  homes.push(h);
  return { ...h, env: fakeEnv(h) };
}
afterAll(() => homes.forEach((h) => h.cleanup()));
const ID = '20261130-101500-agg';
const stoppedRun = (h: ReturnType<typeof home>) => writeFakeRun(h.stateDir, {
  id: ID, state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, createdAt: '2026-10-07T05:11:59Z',
  processes: [{ name: 'frontend', pid: null, startTicks: null }, { name: 'agg-0', pid: null, startTicks: null }],
  logLines: { frontend: 'frontend line\n', 'agg-0': 'worker line\n' },
});

describe('run.json, read by status (and every command that lists runs)', () => {
  it('a link to a secret file is not followed, a FIFO does not block, text that is not JSON is never quoted', async () => {
    const h = home();
    await stoppedRun(h);
    const path = join(h.stateDir, 'runs', ID, 'run.json');
    const secret = join(h.dir, 'secret');
    writeFileSync(secret, 'password=hunter2');
    const cases: [string, () => void, string][] = [
      ['link', () => symlinkSync(secret, path), 'a symbolic link, which is not followed'],
      ['fifo', () => execFileSync('mkfifo', [path]), 'not a regular file'],
      ['text', () => writeFileSync(path, 'password=hunter2'), 'not JSON (invalid from the first bytes)'],
      ['half', () => writeFileSync(path, '{"id": "password=hunter2", "x": ['), 'not JSON (it ends early)'],
      ['deep', () => writeFileSync(path, `${'['.repeat(100_000)}${']'.repeat(100_000)}`), 'nested deeper than 64 levels; a run record never is'],
    ];
    for (const [what, make, reason] of cases) {
      rmSync(path, { force: true });
      make();
      for (const args of [['status'], ['status', '--json'], ['logs']]) {
        const r = await runCli(args, h.env, { timeoutMs: 15_000 });
        expect([what, args, r.stdout + r.stderr]).not.toEqual([what, args, expect.stringContaining('hunter2')]);
        expect([what, args, r.stderr]).toEqual([what, args, expect.stringContaining(`${path}: skipped, not a valid run record: ${reason}`)]);
      }
    }
  });
});

describe('a process\'s log, read by logs', () => {
  it('a FIFO where a log is: logs says so in one line, exit 1, at once (before: it waited for a writer for good)', async () => {
    const h = home();
    const rec = await stoppedRun(h);
    const log = rec.processes[1].log;
    rmSync(log);
    execFileSync('mkfifo', [log]);
    const one = await runCli(['logs', 'agg-0'], h.env, { timeoutMs: 15_000 });
    expect([one.code, one.stderr]).toEqual([1, `dynamo-dev: ${log}: not a regular file; a log is one`]);
    const all = await runCli(['logs'], h.env, { timeoutMs: 15_000 });
    expect(all.code).toBe(1);
    expect(all.stderr).toContain(`${log}: not a regular file; a log is one`);
  });
});

describe('aiperf on PATH, whose first line names its interpreter', () => {
  it('a FIFO named aiperf: bench goes on without its version (before: the head read blocked bench for good)', async () => {
    const h = home();
    const bin = join(h.dir, 'bin');
    mkdirSync(bin);
    execFileSync('mkfifo', [join(bin, 'aiperf')]);
    chmodSync(join(bin, 'aiperf'), 0o755);
    const r = await runCli(['bench', 'mocker', '--requests', '1', '--repeats', '1'], { ...h.env, PATH: [bin, h.env.PATH].join(delimiter) }, { timeoutMs: 20_000 });
    expect(r.code).not.toBe(-1); // ended by itself, not by the test's timeout
    expect(r.stdout.split('\n')[0]).toMatch(/; AIPerf \(version unknown\)$/);
  });
});
