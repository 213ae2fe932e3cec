import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { isAlive, waitUntil } from '../helpers/proc-trees.js';
import { records, upHarness } from '../helpers/up-run.js';
import type { RunStatusDoc } from '../../src/run/status-doc.js';

// `up` began stopping its run (SIGTERM sent, the record says `stopping`) and was then SIGKILLed
// while its workers ignore SIGTERM (the fake's ignore-sigterm scenario): nothing stops those
// workers any more. teardown must not say "its supervisor is already stopping it" (that supervisor
// is dead), but stop them itself, say it does, and leave nothing. The other branch, a live
// supervisor stopping the run, keeps its message: test/e2e/status-while-stopping.test.ts.

const up = upHarness('dd-sup-died-');
afterEach(() => up.cleanup());

describe('teardown of a run whose supervisor died while stopping it', () => {
  it('says the supervisor died mid-stop, SIGKILLs the workers that ignore SIGTERM, nothing remains, status then says stopped', async () => {
    const s = await up.setup({ FAKE_WORKER_SCENARIO: 'ignore-sigterm' });
    const run = up.startUp(['up', 'agg-router', '--no-preflight', '--json', '--grace', '60', ...s.sets], s.env);
    await run.waitEvent((e) => e.event === 'ready', 25_000);
    run.child.kill('SIGINT');
    await run.waitEvent((e) => e.event === 'stopping');
    // The event is printed before the record's write lands (same tick): wait for the file.
    await waitUntil(() => records(s.stateDir)[0]?.state === 'stopping', 'the record to say stopping');
    // The supervisor dies mid-stop: the record keeps saying `stopping`, the workers keep running.
    run.child.kill('SIGKILL');
    await run.exit;
    const rec = records(s.stateDir)[0];
    expect(rec.state).toBe('stopping');
    const workers = rec.processes.filter((p) => p.role !== 'frontend').map((p) => p.pid!);
    expect(workers).toHaveLength(2);
    for (const pid of workers) expect(isAlive(pid), `worker ${pid}`).toBe(true);

    // status: nobody is stopping it; it is orphaned, not "stopping".
    const before = (JSON.parse((await runCli(['status', '--json'], s.env)).stdout) as { runs: RunStatusDoc[] }).runs[0];
    expect([before.state, before.live, before.stopping, before.supervisor.alive]).toEqual(['orphaned', true, null, false]);

    const td = await runCli(['teardown', '--run', rec.id, '--grace', '1'], s.env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(td.stdout).not.toContain('already stopping');
    expect(td.stdout).toContain(
      `stopping run ${rec.id} (3 processes, orphaned: its supervisor (pid ${rec.supervisor.pid}) died while stopping it; teardown stops what is left; SIGKILL after 1 s)\n`,
    );
    // What it did: each worker ignored SIGTERM and got SIGKILL from this teardown; then the verdict.
    for (const name of ['agg-0', 'agg-1']) {
      const pid = rec.processes.find((p) => p.name === name)!.pid!;
      expect(td.stdout).toMatch(new RegExp(`✓ ${name}\\s+pid ${pid}\\s+SIGKILL\\s+[\\d.]+ s\\n {4}${name} ignored SIGTERM; its log: \\S+${name}\\.log\\n`));
    }
    expect(td.stdout).toMatch(/nothing remains: stopped [23] process(es)? in [\d.]+ m?s\n/);
    for (const pid of workers) expect(isAlive(pid), `worker ${pid}`).toBe(false);

    const after = (JSON.parse((await runCli(['status', '--json'], s.env)).stdout) as { runs: RunStatusDoc[] }).runs[0];
    expect([after.state, after.live, after.stopping]).toEqual(['stopped', false, null]);
  });
});
