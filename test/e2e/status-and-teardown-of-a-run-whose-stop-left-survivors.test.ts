import { afterEach, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { deadPid, isAlive, killStarted, runEnv, spawnLone, writeFakeRun } from '../helpers/proc-trees.js';
import { readRun } from '../../src/run/state.js';
import type { RunStatusDoc } from '../../src/run/status-doc.js';

// Through the built binary: a run whose stop gave up on a process that outlived SIGKILL, as `up`
// records it (run.json `survivors`: pid, start ticks, among its process's descendants). No test can
// put a process in D state, so a live process stands in for the survivor after it left the kernel
// call: status shows the run with it (orphaned, never `stopped`), teardown tries it again and this
// time ends it. One whose pid now belongs to another process is neither shown nor signalled.
// (A survivor that still outlives teardown's SIGKILL: test/unit/run/teardown-tries-survivors-again.test.ts.)

const home = tempHomes('dd-survivor-e2e-');
afterEach(() => killStarted());

const ID = '20261202-062000-000-agg';

async function recordRun(stateDir: string, survivor: { pid: number; startTicks: number }) {
  const at = new Date(Date.now() - 30_000).toISOString();
  await writeFakeRun(stateDir, {
    id: ID, state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 },
    processes: [
      { name: 'frontend', pid: deadPid(), startTicks: 1, state: 'stopped', signal: 'SIGTERM' },
      { name: 'agg-0', pid: deadPid(), startTicks: 1, state: 'stopped', signal: 'SIGKILL', descendants: [{ pid: survivor.pid, startTicks: survivor.startTicks, cmd: 'VLLM::EngineCore' }] },
    ],
    survivors: [{ name: 'agg-0', pid: survivor.pid, startTicks: survivor.startTicks, cmd: 'VLLM::EngineCore', at }],
  });
}

describe('a run whose stop left a process SIGKILL could not end', () => {
  it('status shows it orphaned with the survivor and the teardown; teardown tries again, ends it, exit 0; then the run is stopped', async () => {
    const h = home();
    const env = fakeEnv(h);
    const engine = await spawnLone('VLLM::EngineCore', ['3000'], { env: runEnv(h.stateDir, ID) });
    await recordRun(h.stateDir, engine);

    const human = await runCli(['status'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`run ${ID}  agg  orphaned (its stop left 1 process SIGKILL could not end)`);
    expect(human.stdout).toMatch(new RegExp(`✗ pid ${engine.pid} \\(agg-0, VLLM::EngineCore\\) survived SIGKILL at \\d\\d:\\d\\d:\\d\\d \\(3\\ds ago\\); state S: no longer stuck, teardown can end it now`));
    expect(human.stdout).toContain(`    dynamo-dev teardown --run ${ID}\n    check it with: ps -o pid,stat,args -p ${engine.pid}\n`);
    expect(human.stdout).not.toContain('no live runs');

    const doc = (JSON.parse((await runCli(['status', '--json'], env)).stdout) as { runs: RunStatusDoc[] }).runs[0];
    expect(doc).toMatchObject({ id: ID, state: 'orphaned', live: true, survivors: [{ name: 'agg-0', pid: engine.pid, cmd: 'VLLM::EngineCore', state: 'S' }] });

    const td = await runCli(['teardown', '--grace', '1'], env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(td.stdout).toContain(`stopping run ${ID} (2 processes, orphaned: its last stop could not end pid ${engine.pid} (agg-0) with SIGKILL; trying again; SIGKILL after 1 s)`);
    expect(td.stdout).toMatch(/nothing remains: stopped 1 process in /);
    expect(isAlive(engine.pid)).toBe(false);
    expect(await readRun(h.stateDir, ID)).not.toHaveProperty('survivors');

    const after = await runCli(['status'], env);
    expect(after.stdout).toContain('no live runs');
    expect(after.stdout).toMatch(new RegExp(`${ID} +agg +stopped`));
  });

  it('its pid now another process (start ticks differ): status says stopped, teardown --run has nothing to stop and leaves that process alone', async () => {
    const h = home();
    const env = fakeEnv(h);
    const stranger = await spawnLone('VLLM::EngineCore');
    await recordRun(h.stateDir, { pid: stranger.pid, startTicks: stranger.startTicks - 1 });

    const doc = (JSON.parse((await runCli(['status', '--json'], env)).stdout) as { runs: RunStatusDoc[] }).runs[0];
    expect(doc).toMatchObject({ state: 'stopped', live: false, survivors: [] });
    const td = await runCli(['teardown', '--run', ID, '--grace', '1'], env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(td.stdout).toContain(`run ${ID} is not running (stopped); nothing to stop`);
    expect(isAlive(stranger.pid)).toBe(true);
  });
});
