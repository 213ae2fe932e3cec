import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { records, upHarness } from '../helpers/up-run.js';
import type { RunStatusDoc } from '../../src/run/status-doc.js';

// A run its supervisor is stopping, while workers that ignore SIGTERM (the fake's ignore-sigterm
// scenario) keep it stopping until the grace ends: status must not call it done. CLI.md's states
// have no word for stopping: the JSON state stays `stopped` (where the run is going) and the
// document and the table say it is not there yet, what still runs and when SIGKILL comes.

const up = upHarness('dd-stopping-');
afterEach(() => up.cleanup());

describe('status of a run that is being stopped', () => {
  it('says stopping with what still runs and when SIGKILL comes; teardown says its supervisor is on it, and up that teardown\'s SIGTERM ended it; stopped once it is', async () => {
    const s = await up.setup({ FAKE_WORKER_SCENARIO: 'ignore-sigterm' });
    const run = up.startUp(['up', 'agg-router', '--no-preflight', '--json', '--grace', '30', ...s.sets], s.env);
    await run.waitEvent((e) => e.event === 'ready', 25_000);
    run.child.kill('SIGINT');
    const stopping = await run.waitEvent((e) => e.event === 'stopping');
    const rec = records(s.stateDir)[0];
    const pidOf = (name: string) => rec.processes.find((p) => p.name === name)!.pid!;

    const js = await runCli(['status', '--json'], s.env);
    expect(js.code, js.stderr).toBe(0);
    const doc = (JSON.parse(js.stdout) as { runs: RunStatusDoc[] }).runs[0];
    expect(doc.state).toBe('stopped'); // CLI.md's word, kept
    expect(doc.live).toBe(true);
    expect(doc.stopping).not.toBeNull();
    expect(doc.stopping!.supervisorPid).toBe(rec.supervisor.pid);
    expect(Date.parse(doc.stopping!.killAt!)).toBe(stopping.killAt);
    // The workers ignore SIGTERM: they run until the grace ends (30 s).
    expect(doc.stopping!.running).toEqual(expect.arrayContaining(['agg-0', 'agg-1']));
    // Alive, but SIGTERM reached them: not ready, in the JSON as in the table's READY column.
    expect(doc.processes.filter((p) => p.name !== 'frontend').map((p) => [p.name, p.alive, p.ready])).toEqual([['agg-0', true, false], ['agg-1', true, false]]);

    const human = await runCli(['status'], s.env);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^run ${rec.id}  agg-router  stopping \\([23] of 3 processes still running\\)  `));
    for (const name of ['agg-0', 'agg-1']) expect(lines.find((l) => l.startsWith(`  ${name} `))).toMatch(new RegExp(`^  ${name} +${pidOf(name)} +yes +no +stopping `));
    const note = lines.find((l) => l.startsWith('  ! still stopping: '));
    expect(note).toMatch(new RegExp(`its supervisor \\(pid ${rec.supervisor.pid}\\) sent SIGTERM; .*agg-0 \\(pid ${pidOf('agg-0')}\\), agg-1 \\(pid ${pidOf('agg-1')}\\) still running; SIGKILL in (2\\d|30) s for what ignores SIGTERM$`));

    // teardown of it now: not "stopped", its supervisor is already on it; it ends the stop early.
    const td = await runCli(['teardown', '--run', rec.id, '--grace', '1'], s.env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(td.stdout).toContain(`stopping run ${rec.id} (3 processes, its supervisor is already stopping it; SIGKILL after 1 s)`);
    const stopped = await run.waitEvent((e) => e.event === 'stopped');
    // teardown's SIGTERM to the stopping supervisor is what SIGKILLed the workers: up says so, not "the second Ctrl-C".
    const workers = (stopped as unknown as { stopped: { name: string; signal: string; forced?: boolean; forcedBy?: string }[] }).stopped.filter((x) => x.name !== 'frontend');
    expect(workers.map((w) => [w.name, w.signal, w.forced, w.forcedBy])).toEqual([['agg-0', 'SIGKILL', true, 'SIGTERM'], ['agg-1', 'SIGKILL', true, 'SIGTERM']]);
    await run.exit;

    const after = (JSON.parse((await runCli(['status', '--json'], s.env)).stdout) as { runs: RunStatusDoc[] }).runs[0];
    expect([after.state, after.live, after.stopping]).toEqual(['stopped', false, null]);
    const table = (await runCli(['status'], s.env)).stdout;
    expect(table).toMatch(new RegExp(`^  ${rec.id}  agg-router  stopped  3 processes`, 'm'));
    expect(table).not.toContain('stopping (');
  });
});
