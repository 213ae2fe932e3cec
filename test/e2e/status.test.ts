import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { deadPid, killStarted, spawnLone, spawnTree, writeFakeRun } from '../helpers/proc-trees.js';

// status through the built binary: run.json records written like the supervisor's, with real
// processes (or dead pids) behind them.

const homes: ReturnType<typeof tempHome>[] = [];
function home() {
  const h = tempHome('dd-status-');
  homes.push(h);
  return { ...h, env: fakeEnv(h) };
}
afterEach(() => killStarted());
afterAll(() => homes.forEach((h) => h.cleanup()));

interface Doc {
  runs: {
    id: string; recipe: string; state: string;
    processes: { name: string; pid: number | null; alive: boolean; ready: boolean; kvTokens: number | null; ports: Record<string, number>; uptimeMs: number | null }[];
  }[];
}
const status = async (env: Record<string, string | undefined>, ...args: string[]) => {
  const r = await runCli(['status', '--json', ...args], env);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as Doc;
};

describe('status', () => {
  it('with no runs says so and how to start one', async () => {
    const h = home();
    const r = await runCli(['status'], h.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/no runs recorded/);
    expect(r.stdout).toMatch(/dynamo-dev up/);
    expect(await status(h.env)).toEqual({ runs: [] });
  });

  it('a live run: per process pid, alive, ready, KV tokens, ports, uptime, and the frontend URL', async () => {
    const h = home();
    const sup = await spawnLone('node-dynamo-dev-up');
    const [fe, w] = await Promise.all([spawnTree('honour'), spawnTree('honour')]);
    await writeFakeRun(h.stateDir, {
      id: '20261130-101500-agg', state: 'ready', supervisor: { pid: sup.pid, startTicks: sup.startTicks },
      processes: [
        { name: 'frontend', pid: fe.pid, startTicks: fe.startTicks, ports: { http: 8000 } },
        { name: 'agg-0', pid: w.pid, startTicks: w.startTicks, kvTokens: 14816, ports: { system: 8081, kvEvents: 20080 }, descendants: [w.engine] },
      ],
    });
    const doc = await status(h.env);
    expect(doc.runs).toHaveLength(1);
    const run = doc.runs[0];
    expect(run).toMatchObject({ id: '20261130-101500-agg', recipe: 'agg', state: 'ready', frontendUrl: 'http://127.0.0.1:8000' });
    expect(run.processes[0]).toMatchObject({ name: 'frontend', pid: fe.pid, alive: true, ready: true, kvTokens: null, ports: { http: 8000 } });
    expect(run.processes[1]).toMatchObject({ name: 'agg-0', pid: w.pid, alive: true, ready: true, kvTokens: 14816, ports: { system: 8081, kvEvents: 20080 } });
    expect(run.processes[1].uptimeMs).toBeGreaterThanOrEqual(0);
    expect((run.processes[1] as unknown as { pids: number[] }).pids).toEqual(expect.arrayContaining([w.pid, w.engine.pid]));

    const human = await runCli(['status'], h.env);
    expect(human.stdout).toMatch(/run 20261130-101500-agg\s+agg\s+ready\s+http:\/\/127\.0\.0\.1:8000/);
    expect(human.stdout).toMatch(new RegExp(`agg-0\\s+${w.pid}\\s+yes\\s+yes\\s+ready\\s+14,816\\s+system:8081 kvEvents:20080`));
  });

  it('a supervisor that died (SIGKILL) while its processes live -> orphaned, with the teardown command', async () => {
    const h = home();
    const w = await spawnTree('honour');
    await writeFakeRun(h.stateDir, {
      id: 'orph', state: 'ready', supervisor: { pid: deadPid(), startTicks: 1, detached: false },
      processes: [{ name: 'agg-0', pid: w.pid, startTicks: w.startTicks }],
    });
    expect((await status(h.env)).runs[0].state).toBe('orphaned');
    const human = await runCli(['status'], h.env);
    expect(human.stdout).toMatch(/orphaned/);
    expect(human.stdout).toMatch(/dynamo-dev teardown --run orph/);
  });

  it('up --detach: the supervisor exiting once ready is expected -> ready, not orphaned', async () => {
    const h = home();
    const w = await spawnTree('honour');
    await writeFakeRun(h.stateDir, {
      id: 'det', state: 'ready', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'agg-0', pid: w.pid, startTicks: w.startTicks }],
    });
    expect((await status(h.env)).runs[0].state).toBe('ready');
  });

  it('starting while the supervisor lives; failed when everything died unannounced; stopped stays stopped', async () => {
    const h = home();
    const sup = await spawnLone('node-dynamo-dev-up');
    const w = await spawnTree('honour');
    await writeFakeRun(h.stateDir, {
      id: 'c-starting', state: 'starting', createdAt: '2026-11-30T10:03:00Z', supervisor: { pid: sup.pid, startTicks: sup.startTicks },
      processes: [{ name: 'agg-0', pid: w.pid, startTicks: w.startTicks, state: 'loading' }, { name: 'agg-1', pid: null, startTicks: null, state: 'waiting' }],
    });
    await writeFakeRun(h.stateDir, {
      id: 'b-died', state: 'ready', createdAt: '2026-11-30T10:02:00Z', supervisor: { pid: deadPid(), startTicks: 1 },
      processes: [{ name: 'agg-0', pid: deadPid(), startTicks: 7 }],
    });
    await writeFakeRun(h.stateDir, {
      id: 'a-stopped', state: 'stopped', createdAt: '2026-11-30T10:01:00Z', supervisor: { pid: deadPid(), startTicks: 1 },
      processes: [{ name: 'agg-0', pid: deadPid(), startTicks: 7, state: 'stopped' }],
    });
    const doc = await status(h.env);
    expect(doc.runs.map((r) => [r.id, r.state])).toEqual([['c-starting', 'starting'], ['b-died', 'failed'], ['a-stopped', 'stopped']]);
    expect(doc.runs[0].processes[0]).toMatchObject({ alive: true, ready: false });
    expect(doc.runs[0].processes[1]).toMatchObject({ pid: null, alive: false });
    expect(doc.runs[1].processes[0]).toMatchObject({ alive: false, uptimeMs: null });
  });

  it('a recorded pid that now belongs to another process is not alive', async () => {
    const h = home();
    const other = await spawnLone('unrelated');
    await writeFakeRun(h.stateDir, {
      id: 'reuse', state: 'ready', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'agg-0', pid: other.pid, startTicks: other.startTicks + 1 }],
    });
    const run = (await status(h.env)).runs[0];
    expect(run.processes[0].alive).toBe(false);
    expect(run.state).toBe('failed');
  });

  it('shows live runs and the 5 most recent by default; --all every run; --run one; unknown --run exits 2', async () => {
    const h = home();
    for (let i = 0; i < 7; i++) {
      await writeFakeRun(h.stateDir, {
        id: `2026113${i % 10}-run${i}`, state: 'stopped', createdAt: `2026-11-2${i}T10:00:00Z`, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [],
      });
    }
    expect((await status(h.env)).runs.map((r) => r.id)).toEqual(['20261136-run6', '20261135-run5', '20261134-run4', '20261133-run3', '20261132-run2']);
    expect((await status(h.env, '--all')).runs).toHaveLength(7);
    expect((await status(h.env, '--run', '20261130-run0')).runs.map((r) => r.id)).toEqual(['20261130-run0']);
    const bad = await runCli(['status', '--run', 'nope'], h.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/no run "nope" in .*; recent runs: 20261136-run6, /);
  });

  it('skips an unreadable run.json instead of failing, with one warning naming it', async () => {
    const h = home();
    await writeFakeRun(h.stateDir, { id: 'good', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(`${h.stateDir}/runs/bad`, { recursive: true });
    writeFileSync(`${h.stateDir}/runs/bad/run.json`, '{"id": "bad", "proc');
    const r = await runCli(['status', '--json'], h.env);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Doc).runs.map((x) => x.id)).toEqual(['good']);
    expect(r.stderr).toMatch(new RegExp(`^dynamo-dev: warning: ${h.stateDir}/runs/bad/run\\.json: skipped, not a valid run record: not JSON \\(.*\\)$`));
  });
});
