import { afterEach, describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { teardown } from '../../../src/run/teardown.js';
import { realStopDeps, type StopDeps } from '../../../src/run/stop.js';
import { collectStatus } from '../../../src/run/status-doc.js';
import { readRun } from '../../../src/run/state.js';
import { formatRunPlan, formatVerdict } from '../../../src/ui/teardown-report.js';
import { listRunViews } from '../../../src/run/state.js';
import { tempHomes } from '../../helpers/cli.js';
import { deadPid, isAlive, killStarted, runEnv, spawnLone, writeFakeRun } from '../../helpers/proc-trees.js';

// `teardown` (src/run/teardown.ts) of a run whose earlier stop left a process SIGKILL could not end:
// a real process stands in for it, recorded in run.json as the supervisor records a survivor; the
// injected stop deps swallow every signal to it, as a process stuck in the kernel (D state) would.
// teardown tries it again, reports it with its state and exit-1 verdict, and the record keeps it;
// once it can be signalled again, teardown ends it and the run is over.

chalk.level = 0;
const home = tempHomes('dd-teardown-survivor-');
afterEach(() => killStarted());

const ID = '20261202-061000-000-agg';

/** The real machine, except that nothing reaches `pid`: it outlives SIGTERM and SIGKILL. */
const stuck = (pid: number): StopDeps => ({
  ...realStopDeps,
  kill: (target, sig) => (target === pid || target === -pid ? undefined : realStopDeps.kill(target, sig)),
});

async function runWithSurvivor() {
  const { stateDir } = home();
  const engine = await spawnLone('VLLM::EngineCore', ['3000'], { env: runEnv(stateDir, ID) });
  const survivor = { name: 'agg-0', pid: engine.pid, startTicks: engine.startTicks, cmd: 'VLLM::EngineCore', at: '2026-12-02T06:10:00.000Z' };
  await writeFakeRun(stateDir, {
    id: ID, state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 },
    processes: [
      { name: 'frontend', pid: deadPid(), startTicks: 1, state: 'stopped', signal: 'SIGTERM' },
      { name: 'agg-0', pid: deadPid(), startTicks: 1, state: 'stopped', signal: 'SIGKILL', descendants: [{ pid: engine.pid, startTicks: engine.startTicks, cmd: 'VLLM::EngineCore' }] },
    ],
    survivors: [survivor],
  });
  return { stateDir, engine };
}

describe('teardown of a run whose stop left a survivor', () => {
  it('it is still stuck: teardown says so before and after trying, exit-1 verdict with its state and what to check; the record keeps it', async () => {
    const { stateDir, engine } = await runWithSurvivor();
    const [view] = (await listRunViews(stateDir)).filter((v) => v.live);
    expect(formatRunPlan(view, 0.1)).toBe(`stopping run ${ID} (2 processes, orphaned: its last stop could not end pid ${engine.pid} (agg-0) with SIGKILL; trying again; SIGKILL after 0.1 s)`);
    const out = await teardown({ stateDir, graceMs: 100, orphans: false, stopDeps: stuck(engine.pid) });
    expect(out.runs).toEqual([ID]);
    expect(out.remaining).toEqual([{ run: ID, name: 'agg-0', pid: engine.pid, cmd: expect.stringContaining('VLLM::EngineCore'), startTicks: engine.startTicks, state: 'S' }]);
    expect(out.stopped.find((r) => r.name === 'agg-0')).toMatchObject({ signal: 'SIGKILL', note: `1 process(es) survived SIGKILL: ${engine.pid}` });
    expect(isAlive(engine.pid)).toBe(true);
    const verdict = formatVerdict(out, 2200, []);
    expect(verdict).not.toContain('nothing remains');
    expect(verdict.split('\n')).toEqual([
      '1 process(es) remain:',
      `  ✗ pid ${engine.pid} (agg-0, state S) ${out.remaining[0].cmd}`,
      `fix: check them with: ps -o pid,stat,args -p ${engine.pid}  (state D = stuck in the kernel, e.g. a GPU driver call)`,
      `     run ${ID} keeps it as its own (\`dynamo-dev status\` shows it); try again with: dynamo-dev teardown --run ${ID}`,
      '',
    ]);
    const rec = await readRun(stateDir, ID);
    expect(rec.state).toBe('stopped');
    expect(rec.survivors?.map((s) => [s.name, s.pid, s.startTicks])).toEqual([['agg-0', engine.pid, engine.startTicks]]);
    const [doc] = await collectStatus(stateDir, {});
    expect(doc).toMatchObject({ id: ID, state: 'orphaned', live: true, survivors: [{ name: 'agg-0', pid: engine.pid, state: 'S' }] });
  });

  it('it can be signalled again: teardown ends it, nothing remains, the record drops it and status says stopped', async () => {
    const { stateDir, engine } = await runWithSurvivor();
    const out = await teardown({ stateDir, runId: ID, graceMs: 100, orphans: false });
    expect(out.remaining).toEqual([]);
    expect(out.stopped.find((r) => r.name === 'agg-0')).toMatchObject({ signal: 'SIGTERM' });
    expect(isAlive(engine.pid)).toBe(false);
    expect(formatVerdict(out, 50, [])).toMatch(/^nothing remains: stopped 1 process in 50 ms\n$/);
    const rec = await readRun(stateDir, ID);
    expect(rec.state).toBe('stopped');
    expect(rec).not.toHaveProperty('survivors');
    const [doc] = await collectStatus(stateDir, { runId: ID });
    expect(doc).toMatchObject({ state: 'stopped', live: false, survivors: [] });
  });
});
