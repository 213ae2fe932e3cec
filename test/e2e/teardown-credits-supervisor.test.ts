import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FIXTURES, runCli } from '../helpers/cli.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';
import { waitUntil } from '../helpers/proc-trees.js';

// teardown of a detached run signals the run's supervisor, then its processes; the supervisor stops
// them too, on teardown's behalf. What it ended first is teardown's to report as stopped, with the
// signal the supervisor sent (run.json processes[].stop), never "already gone, no signal"; what had
// really ended before anyone asked stays "already gone". The race is made certain by
// test/fixtures/host/supervisor-first.cjs: teardown waits, right after signalling the supervisor,
// until the supervisor has stopped the groups named.

const up = upHarness('dd-td-credit-');
afterEach(() => up.cleanup());

async function detachedRun(s: Awaited<ReturnType<typeof up.setup>>, extra: string[] = []) {
  const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--json', ...extra, ...s.sets], s.env, { timeoutMs: 25_000 });
  expect(r.code, r.stderr).toBe(0);
  return records(s.stateDir)[0];
}

describe('teardown of a detached run credits what its supervisor stopped on its behalf', () => {
  it('processes the supervisor stopped before teardown looked: SIGTERM, by the supervisor; one killed before teardown: already gone', async () => {
    const s = await up.setup();
    const rec = await detachedRun(s);
    const pid = (name: string) => rec.processes.find((p) => p.name === name)!.pid!;
    // The rare branch: agg-1 (its whole group) ended before anyone asked.
    process.kill(-pid('agg-1'), 'SIGKILL');
    await waitUntil(() => records(s.stateDir)[0].processes.find((p) => p.name === 'agg-1')!.endedAt ?? null, "the supervisor to record agg-1's death", 10_000);

    const env = {
      ...s.env,
      NODE_OPTIONS: `--require "${join(FIXTURES, 'host', 'supervisor-first.cjs')}"`,
      SUPERVISOR_FIRST_PID: String(rec.supervisor.pid),
      SUPERVISOR_FIRST_GROUPS: `${pid('frontend')},${pid('agg-0')}`,
    };
    const td = await runCli(['teardown', '--grace', '5'], env, { timeoutMs: 30_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    const sup = rec.supervisor.pid;
    for (const name of ['frontend', 'agg-0']) {
      expect(td.stdout).toMatch(new RegExp(`✓ ${name}\\s+pid ${pid(name)}\\s+SIGTERM\\s+[\\d.]+ m?s\\s+stopped by its supervisor \\(pid ${sup}\\) for teardown\\n`));
    }
    expect(td.stdout).toMatch(new RegExp(`- agg-1\\s+pid ${pid('agg-1')}\\s+no signal\\s+0 ms\\s+already gone\\n`));
    expect(td.stdout).toMatch(new RegExp(`✓ supervisor\\s+pid ${sup}\\s+SIGTERM`));
    // Its line comes after those it earned.
    expect(td.stdout.indexOf('✓ supervisor')).toBeGreaterThan(td.stdout.indexOf('✓ agg-0'));
    expect(td.stdout).toMatch(/nothing remains: stopped 3 processes in/);
    expect(td.stdout).not.toContain('ignored SIGTERM');
    const after = records(s.stateDir)[0];
    expect(after.processes.find((p) => p.name === 'agg-0')!.stop).toMatchObject({ signal: 'SIGTERM' });
    expect(after.processes.find((p) => p.name === 'agg-1')!.stop ?? null).toBeNull();
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });

  it("a worker that ignored SIGTERM and got the supervisor's SIGKILL (its grace shorter than teardown's) reads SIGKILL, and that it ignored SIGTERM", async () => {
    const s = await up.setup();
    // agg-1 (system port + 1) ignores SIGTERM; the run's supervisor SIGKILLs at its grace, 1 s.
    s.env[`FAKE_WORKER_SCENARIO_${s.ports.system + 1}`] = 'ignore-sigterm';
    const rec = await detachedRun(s, ['--grace', '1']);
    const agg1 = rec.processes.find((p) => p.name === 'agg-1')!;
    const td = await runCli(['teardown', '--grace', '8'], s.env, { timeoutMs: 30_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    const sup = rec.supervisor.pid;
    expect(td.stdout).toMatch(new RegExp(`✓ agg-1\\s+pid ${agg1.pid}\\s+SIGKILL\\s+[\\d.]+ m?s\\s+SIGKILL from its supervisor \\(pid ${sup}\\), whose grace ran out first\\n {4}agg-1 ignored SIGTERM; its log: ${agg1.log}\\n`));
    // Before teardown's own SIGKILL was due.
    expect(Number(/✓ agg-1\s+pid \d+\s+SIGKILL\s+([\d.]+) s/.exec(td.stdout)?.[1])).toBeLessThan(8);
    expect(td.stdout).toMatch(/nothing remains: stopped 4 processes in/);
    expect(records(s.stateDir)[0].processes.find((p) => p.name === 'agg-1')!.stop).toMatchObject({ signal: 'SIGKILL' });
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});
