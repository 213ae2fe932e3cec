import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, runCli } from '../helpers/cli.js';
import { isAlive, waitUntil } from '../helpers/proc-trees.js';
import { records, upHarness } from '../helpers/up-run.js';
import { markedProcesses, markerFor } from '../../src/run/run-scan.js';

// A python that is a wrapper staying the parent of the real interpreter (uv run; sh -c '. venv/bin/
// activate && python ...'), here with the interpreter in a session of its own: the record names the
// wrapper, the frontend and worker are its children, and no signal to the wrapper's group reaches
// them. status must count them as their processes' (not gone), and a stop (teardown --run, or the
// foreground up's own) must leave none of them behind, though the wrapper dies first at SIGTERM.

const WRAPPER = join(FIXTURES, 'hostile', 'python-stays-parent');
const up = upHarness('dd-wrapper-');
const markers: string[] = [];
afterEach(async () => {
  await up.cleanup();
  // What a broken stop would have left: found by the run marker, SIGKILLed.
  for (const m of markers.splice(0)) for (const s of await markedProcesses(m, 0)) try { process.kill(s.pid, 'SIGKILL'); } catch { /* gone */ }
});

const cmdOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
};
/** The live processes carrying the run's marker that are the real programs (python -m dynamo.*), not the wrappers. */
const programs = async (marker: string) => (await markedProcesses(marker, 0)).filter((s) => / -m dynamo\./.test(cmdOf(s.pid)) && !cmdOf(s.pid).includes('python-stays-parent'));

describe('processes started through a python wrapper that stays their parent', () => {
  it('up --detach: status counts each program as its process\'s, all alive and ready; teardown --run stops them all', async () => {
    const s = await up.setup();
    const r = await runCli(['up', 'agg', '--detach', '--no-preflight', '--json', '--python', WRAPPER, ...s.sets], s.env, { timeoutMs: 40_000 });
    expect(r.code, r.stderr).toBe(0);
    const rec = records(s.stateDir)[0];
    const marker = markerFor(s.stateDir, rec.id);
    markers.push(marker);
    const real = await programs(marker);
    expect(real).toHaveLength(rec.processes.length);

    const doc = JSON.parse((await runCli(['status', '--json', '--run', rec.id], s.env)).stdout) as { runs: any[] };
    const run = doc.runs[0];
    expect(run).toMatchObject({ state: 'ready', live: true, lost: [], unrecorded: [] });
    for (const p of run.processes) {
      expect(p).toMatchObject({ alive: true, ready: true });
      expect(cmdOf(p.pid)).toContain('python-stays-parent'); // the record names the wrapper
      // ...and the program under it is that process's.
      expect(real.filter((x) => p.pids.includes(x.pid))).toHaveLength(1);
    }

    const t = await runCli(['teardown', '--run', rec.id, '--grace', '3', '--json'], s.env, { timeoutMs: 30_000 });
    expect(t.code, t.stdout + t.stderr).toBe(0);
    expect(JSON.parse(t.stdout).remaining).toEqual([]);
    expect(await markedProcesses(marker, 0)).toEqual([]);
  });

  it('a foreground up stopped with Ctrl-C stops the programs under the wrappers too: none left, none unreported', async () => {
    const s = await up.setup();
    const run = up.startUp(['up', 'agg', '--json', '--no-preflight', '--grace', '3', '--python', WRAPPER, ...s.sets], s.env);
    const plan = await run.waitEvent((e) => e.event === 'plan');
    const marker = markerFor(s.stateDir, plan.runId);
    markers.push(marker);
    await run.waitEvent((e) => e.event === 'ready', 30_000);
    expect(await programs(marker)).toHaveLength(records(s.stateDir)[0].processes.length);
    run.child.kill('SIGINT');
    const stopped = await run.waitEvent((e) => e.event === 'stopped');
    expect((await run.exit).code).toBe(0);
    expect(stopped.remaining).toEqual([]);
    expect(await markedProcesses(marker, 0)).toEqual([]);
  });

  it('while up stops, the program its wrapper left shutting down is the run\'s: status loses nothing, doctor calls it no leftover', async () => {
    // The frontend ignores SIGTERM: it lives until the SIGKILL a second Ctrl-C asks for.
    const s = await up.setup({ FAKE_FRONTEND_SCENARIO: 'ignore-sigterm' });
    const run = up.startUp(['up', 'agg', '--json', '--no-preflight', '--grace', '60', '--python', WRAPPER, ...s.sets], s.env);
    const plan = await run.waitEvent((e) => e.event === 'plan');
    const marker = markerFor(s.stateDir, plan.runId);
    markers.push(marker);
    await run.waitEvent((e) => e.event === 'ready', 30_000);
    const wrapper = records(s.stateDir)[0].processes.find((p) => p.name === 'frontend')!.pid!;
    const frontend = (await programs(marker)).find((x) => cmdOf(x.pid).includes('dynamo.frontend'))!.pid;
    run.child.kill('SIGINT');
    await run.waitEvent((e) => e.event === 'stopping');
    await waitUntil(() => !isAlive(wrapper) && records(s.stateDir)[0].state === 'stopping', 'the wrapper to die at SIGTERM', 10_000);
    expect(isAlive(frontend)).toBe(true);

    const st = JSON.parse((await runCli(['status', '--json', '--run', plan.runId], s.env)).stdout) as { runs: any[] };
    expect(st.runs[0].lost).toEqual([]);
    expect(st.runs[0].processes.find((p: any) => p.name === 'frontend').pids).toEqual([frontend]);
    const d = await runCli(['doctor', '--only', 'procs.leftover', '--json'], s.env);
    const check = (JSON.parse(d.stdout) as { checks: { evidence: { ourPids: number[]; processes: { pid: number }[] } }[] }).checks[0];
    expect(check.evidence.ourPids).toContain(frontend);
    // Other test files' fakes may be leftovers here; this run's frontend is not.
    expect(check.evidence.processes.map((p) => p.pid)).not.toContain(frontend);

    run.child.kill('SIGINT'); // a second Ctrl-C: SIGKILL now
    expect((await run.exit).code).toBe(0);
    expect((await run.waitEvent((e) => e.event === 'stopped')).remaining).toEqual([]);
    expect(await markedProcesses(marker, 0)).toEqual([]);
  });
});
