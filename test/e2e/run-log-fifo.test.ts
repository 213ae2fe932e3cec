import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { deadPid, writeFakeRun } from '../helpers/proc-trees.js';
import { cacheQwen3, records } from '../helpers/runs.js';
import { upHarness } from '../helpers/up-run.js';

// A FIFO put where a run's process log is (issue 29: the files under a run's folder we read back
// are opened without blocking, checked to be regular files): no command waits on it for a writer
// that never comes. Each command is given 20 s; before, `restart` never answered (the supervisor
// blocked on opening the FIFO for the new process's output, its event loop with it), `diagnose
// --run` refused the whole run (exit 2, 'pass log files or folders') and doctor's KV checks crashed.

const home = tempHomes('dd-log-fifo-');
const h = upHarness('dd-log-fifo-up-');
afterEach(() => h.cleanup());

const fifoAt = (path: string) => {
  rmSync(path, { force: true });
  execFileSync('mkfifo', [path]);
};
const WARNING = (log: string) => `dynamo-dev: warning: ${log}: a named pipe, not a log file: not read`;

describe('a FIFO where a process log is', () => {
  it('an ended run: status answers, diagnose --run judges the other logs and says which one it could not read', async () => {
    const hm = home();
    const env = fakeEnv(hm);
    const id = '20261207-150000-000-agg';
    await writeFakeRun(hm.stateDir, {
      id, state: 'failed', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'frontend', pid: deadPid(), startTicks: 1, state: 'failed' }, { name: 'agg-0', pid: deadPid(), startTicks: 1, state: 'failed' }],
      logLines: { frontend: 'CUDA error: out of memory\n' },
    });
    const log = join(hm.stateDir, 'runs', id, 'logs', 'agg-0.log');
    fifoAt(log);
    const st = await runCli(['status'], env);
    expect(st.code, st.stderr).toBe(0);
    for (const args of [['diagnose', '--run', id], ['diagnose']]) {
      const d = await runCli(args, env);
      expect(d.code, d.stderr).toBe(1);
      expect(d.stderr.trim()).toBe(WARNING(log));
      expect(d.stdout).toMatch(/1 file, \d+ B scanned/);
    }
  });

  it('a live run: status, logs of another process, diagnose --run and doctor answer; restart of its process says why it could not start it; teardown is quick', async () => {
    const s = await h.setup();
    cacheQwen3(s.hfCache);
    const up = h.startUp(['up', 'agg', '--json', ...s.sets], s.env);
    await up.waitEvent((e) => e.event === 'ready', null);
    const rec = records(s.stateDir)[0];
    const log = join(s.stateDir, 'runs', rec.id, 'logs', 'agg-0.log');
    fifoAt(log);

    expect((await runCli(['status'], s.env)).code).toBe(0);
    expect((await runCli(['logs', 'frontend'], s.env)).code).toBe(0);
    const d = await runCli(['diagnose', '--run', rec.id], s.env);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stderr.trim()).toBe(WARNING(log));
    const doc = await runCli(['doctor', '--json'], s.env, { timeoutMs: 30_000 });
    expect(doc.code).not.toBe(-1);
    const checks = (JSON.parse(doc.stdout) as { checks: { id: string; summary: string; details?: string[] }[] }).checks;
    expect(checks.filter((c) => /check crashed/.test(c.summary)).map((c) => c.id)).toEqual([]);
    expect(JSON.stringify(checks.find((c) => c.id === 'kv.allocated'))).toContain(`agg-0: its log ${log} is a named pipe, not a log file: not read`);

    const r = await runCli(['restart', 'agg-0'], s.env);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(`✗ agg-0 did not come back: agg-0 could not be started: its log ${log} is a named pipe (FIFO), not a regular file; nothing started`);
    // Nothing started: no "started agg-0 (pid ?)" above the verdict.
    expect(r.stdout).not.toContain('started agg-0');
    // The supervisor still answers: it stops on SIGTERM, no SIGKILL needed.
    const t = await runCli(['teardown', '--json', '--grace', '5'], s.env);
    expect(t.code, t.stderr).toBe(0);
    expect(JSON.parse(t.stdout).stopped.find((x: { name: string }) => x.name === 'supervisor')).toMatchObject({ signal: 'SIGTERM' });
    expect((await up.exit).code).not.toBeNull();
  }, 120_000);
});
