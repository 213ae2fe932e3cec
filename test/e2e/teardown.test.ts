import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { deadPid, isAlive, killStarted, runEnv, spawnTree, writeFakeRun } from '../helpers/proc-trees.js';
import { spawnLone } from '../helpers/proc-trees.js';
import type { RunRecord } from '../../src/run/types.js';

// teardown through the built binary against real process trees (bash + `exec -a VLLM::EngineCore`),
// recorded in a run.json the way the supervisor writes it.

const homes: ReturnType<typeof tempHome>[] = [];
function home() {
  const h = tempHome('dd-teardown-');
  homes.push(h);
  return { ...h, env: fakeEnv(h) };
}
afterEach(() => killStarted());
afterAll(() => homes.forEach((h) => h.cleanup()));

interface Doc {
  stopped: { name: string; pid: number; signal: string | null; ms: number; note?: string; run?: string | null }[];
  remaining: { name: string; pid: number; cmd: string }[];
}
const readRecord = (stateDir: string, id: string): RunRecord => JSON.parse(readFileSync(join(stateDir, 'runs', id, 'run.json'), 'utf8'));

describe('teardown of recorded runs', () => {
  it('stops three trees that honour SIGTERM with SIGTERM, leaves nothing, marks the run stopped, keeps the logs, well under a second', async () => {
    const h = home();
    const [fe, a0, a1] = await Promise.all([spawnTree('honour', runEnv(h.stateDir, 'r1')), spawnTree('honour', runEnv(h.stateDir, 'r1')), spawnTree('honour', runEnv(h.stateDir, 'r1'))]);
    await writeFakeRun(h.stateDir, {
      id: 'r1',
      supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [
        { name: 'frontend', pid: fe.pid, startTicks: fe.startTicks, descendants: [fe.engine] },
        { name: 'agg-0', pid: a0.pid, startTicks: a0.startTicks, descendants: [a0.engine] },
        { name: 'agg-1', pid: a1.pid, startTicks: a1.startTicks, descendants: [a1.engine] },
      ],
      logLines: { frontend: 'started\n', 'agg-0': 'GPU KV cache size: 14,816 tokens\n' },
    });
    const r = await runCli(['teardown', '--json'], h.env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.remaining).toEqual([]);
    expect(doc.stopped.map((s) => [s.name, s.pid, s.signal])).toEqual([
      ['frontend', fe.pid, 'SIGTERM'], ['agg-0', a0.pid, 'SIGTERM'], ['agg-1', a1.pid, 'SIGTERM'],
    ]);
    for (const s of doc.stopped) {
      expect(Object.keys(s)).toEqual(expect.arrayContaining(['name', 'pid', 'signal', 'ms']));
      expect(s.ms).toBeLessThan(500);
    }
    expect(r.durationMs).toBeLessThan(2000); // node start included; the stop itself is the ms above
    for (const t of [fe, a0, a1]) {
      expect(isAlive(t.pid)).toBe(false);
      expect(isAlive(t.engine.pid)).toBe(false);
    }
    const rec = readRecord(h.stateDir, 'r1');
    expect(rec.state).toBe('stopped');
    expect(rec.processes.map((p) => p.state)).toEqual(['stopped', 'stopped', 'stopped']);
    expect(readFileSync(join(h.stateDir, 'runs', 'r1', 'logs', 'agg-0.log'), 'utf8')).toContain('14,816');
    expect(existsSync(join(h.stateDir, 'runs', 'r1', 'logs', 'frontend.log'))).toBe(true);
  });

  it('SIGKILLs a worker that ignores SIGTERM at the grace deadline, grandchildren included', async () => {
    const h = home();
    const t = await spawnTree('ignore', runEnv(h.stateDir, 'r2'));
    await writeFakeRun(h.stateDir, {
      id: 'r2', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'agg-0', pid: t.pid, startTicks: t.startTicks, descendants: [t.engine] }],
    });
    const r = await runCli(['teardown', '--grace', '0.5', '--json'], h.env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.stopped).toHaveLength(1);
    expect(doc.stopped[0].signal).toBe('SIGKILL');
    expect(doc.stopped[0].ms).toBeGreaterThanOrEqual(500);
    expect(doc.stopped[0].ms).toBeLessThan(1500);
    expect(doc.remaining).toEqual([]);
    for (const d of [t.pid, ...t.descendants.map((x) => x.pid)]) expect(isAlive(d)).toBe(false);
  });

  it('keeps escalating when the group leader exits first and its members ignore SIGTERM (process-compose #520)', async () => {
    const h = home();
    const t = await spawnTree('leader-first', runEnv(h.stateDir, 'r3'));
    await writeFakeRun(h.stateDir, {
      id: 'r3', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'decode-0', role: 'decode', pid: t.pid, startTicks: t.startTicks }],
    });
    const r = await runCli(['teardown', '--grace', '0.5'], h.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`decode-0\\s+pid ${t.pid}\\s+SIGKILL`));
    expect(r.stdout).toMatch(/nothing remains/);
    expect(isAlive(t.pid)).toBe(false);
    for (const d of t.descendants) expect(isAlive(d.pid)).toBe(false);
  });

  it('finds and stops an engine that left the group with setsid but was recorded as a descendant', async () => {
    const h = home();
    const t = await spawnTree('escape', runEnv(h.stateDir, 'r4'));
    expect(t.engine.pid).not.toBe(t.pid);
    await writeFakeRun(h.stateDir, {
      id: 'r4', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'agg-0', pid: t.pid, startTicks: t.startTicks, descendants: [t.engine] }],
    });
    const r = await runCli(['teardown', '--json'], h.env);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Doc).stopped[0].signal).toBe('SIGTERM');
    expect(isAlive(t.engine.pid)).toBe(false);
    expect(isAlive(t.pid)).toBe(false);
  });

  it('never signals a recorded pid that now belongs to another process, and says so', async () => {
    const h = home();
    const other = await spawnLone('unrelated-server');
    await writeFakeRun(h.stateDir, {
      id: 'r5', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'agg-0', pid: other.pid, startTicks: other.startTicks + 12345 }],
    });
    const r = await runCli(['teardown', '--run', 'r5', '--json'], h.env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    // r5 is not live (its only pid is someone else's now), so nothing is signalled at all.
    expect(doc.stopped.every((s) => s.signal === null)).toBe(true);
    expect(isAlive(other.pid)).toBe(true);
    const human = await runCli(['teardown', '--run', 'r5'], h.env);
    expect(human.stdout).toMatch(/r5 is not running/);
    expect(isAlive(other.pid)).toBe(true);
  });

  it('reports a recycled pid next to a live process of the same run, and stops only the real one', async () => {
    const h = home();
    const other = await spawnLone('unrelated-server');
    const t = await spawnTree('honour', runEnv(h.stateDir, 'r6'));
    await writeFakeRun(h.stateDir, {
      id: 'r6', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [
        { name: 'frontend', pid: t.pid, startTicks: t.startTicks },
        { name: 'agg-0', pid: other.pid, startTicks: other.startTicks - 1 },
      ],
    });
    const r = await runCli(['teardown', '--json'], h.env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    const agg = doc.stopped.find((s) => s.name === 'agg-0')!;
    expect(agg.signal).toBeNull();
    expect(agg.note).toMatch(/recycled, not signalled/);
    expect(doc.stopped.find((s) => s.name === 'frontend')!.signal).toBe('SIGTERM');
    expect(isAlive(other.pid)).toBe(true);
    expect(isAlive(t.pid)).toBe(false);
  });

  it('after a supervisor was SIGKILLed: status says orphaned, teardown removes everything, status then says stopped', async () => {
    const h = home();
    const a = await spawnTree('honour', runEnv(h.stateDir, 'r7'));
    const b = await spawnTree('ignore', runEnv(h.stateDir, 'r7'));
    await writeFakeRun(h.stateDir, {
      id: 'r7', state: 'starting', supervisor: { pid: deadPid(), startTicks: 1, detached: false },
      processes: [
        { name: 'frontend', pid: a.pid, startTicks: a.startTicks, descendants: [] },
        { name: 'agg-0', pid: b.pid, startTicks: b.startTicks, descendants: [b.engine], state: 'loading' },
      ],
    });
    const before = JSON.parse((await runCli(['status', '--json'], h.env)).stdout);
    expect(before.runs[0].state).toBe('orphaned');
    const r = await runCli(['down', '--grace', '0.5', '--json'], h.env);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Doc).remaining).toEqual([]);
    for (const p of [a.pid, b.pid, ...a.descendants.map((d) => d.pid), ...b.descendants.map((d) => d.pid)]) expect(isAlive(p)).toBe(false);
    const after = JSON.parse((await runCli(['status', '--json'], h.env)).stdout);
    expect(after.runs[0].state).toBe('stopped');
    expect(after.runs[0].processes.every((p: { alive: boolean }) => !p.alive)).toBe(true);
  });

  it('signals a live foreground supervisor too, but never its process group', async () => {
    const h = home();
    const sup = await spawnLone('node-up-supervisor', ['3000'], { env: runEnv(h.stateDir, 'r8') });
    const t = await spawnTree('honour', runEnv(h.stateDir, 'r8'));
    await writeFakeRun(h.stateDir, {
      id: 'r8', supervisor: { pid: sup.pid, startTicks: sup.startTicks, detached: false },
      processes: [{ name: 'agg-0', pid: t.pid, startTicks: t.startTicks }],
    });
    const r = await runCli(['teardown', '--json'], h.env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.stopped.map((s) => [s.name, s.signal])).toEqual([['supervisor', 'SIGTERM'], ['agg-0', 'SIGTERM']]);
    expect(isAlive(sup.pid)).toBe(false);
  });

  it('stops every live run at once; same process names in two runs are told apart by run id', async () => {
    const h = home();
    const [a, b] = await Promise.all([spawnTree('honour', runEnv(h.stateDir, 'run-a')), spawnTree('honour', runEnv(h.stateDir, 'run-b'))]);
    for (const [id, t] of [['run-a', a], ['run-b', b]] as const) {
      await writeFakeRun(h.stateDir, { id, supervisor: { pid: deadPid(), startTicks: 1, detached: true }, processes: [{ name: 'agg-0', pid: t.pid, startTicks: t.startTicks }] });
    }
    const r = await runCli(['teardown', '--json'], h.env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.stopped.map((s) => [s.run, s.name, s.pid, s.signal]).sort()).toEqual([['run-a', 'agg-0', a.pid, 'SIGTERM'], ['run-b', 'agg-0', b.pid, 'SIGTERM']]);
    expect([readRecord(h.stateDir, 'run-a').state, readRecord(h.stateDir, 'run-b').state]).toEqual(['stopped', 'stopped']);
  });

  it('with no live run says so and exits 0', async () => {
    const h = home();
    const r = await runCli(['teardown'], h.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/no live runs/);
    const j = await runCli(['teardown', '--json'], h.env);
    expect(JSON.parse(j.stdout)).toMatchObject({ stopped: [], remaining: [] });
  });

  it('--run with an unknown id is an input error naming the recorded runs', async () => {
    const h = home();
    await writeFakeRun(h.stateDir, { id: '20261130-101500-agg', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    const r = await runCli(['teardown', '--run', 'nope'], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no run "nope".*20261130-101500-agg/);
  });
});

describe('teardown --orphans (in a private pid namespace, so no one else\'s test process is in sight)', () => {
  it('stops a stray VLLM::EngineCore of this user and never touches one of another user', async () => {
    const h = home();
    // Inside the namespace: a stray engine of ours, one of uid 65534, then teardown, then who is alive.
    const script = [
      '(exec -a VLLM::EngineCore sleep 3000) & mine=$!',
      'setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "exec -a VLLM::EngineCore sleep 3000" & theirs=$!',
      'for i in $(seq 200); do grep -q VLLM /proc/$mine/cmdline 2>/dev/null && grep -q VLLM /proc/$theirs/cmdline 2>/dev/null && break; sleep 0.01; done',
      'echo "pids $mine $theirs"',
      `"${process.execPath}" "${BIN}" teardown --orphans --grace 1 --json; echo "exit $?"`,
      'kill -0 $mine 2>/dev/null && [ "$(cut -d" " -f3 /proc/$mine/stat)" != Z ] && echo "mine alive" || echo "mine gone"',
      'kill -0 $theirs 2>/dev/null && echo "theirs alive" || echo "theirs gone"',
      '{ kill -9 $mine $theirs; wait; } 2>/dev/null',
    ].join('\n');
    const r = await execa('unshare', ['--pid', '--fork', '--mount-proc', 'bash', '-c', script], { env: h.env, extendEnv: false, reject: false, timeout: 20_000 });
    expect(r.stderr).toBe('');
    const [, mine, theirs] = /pids (\d+) (\d+)/.exec(r.stdout)!.map(Number);
    const json = r.stdout.slice(r.stdout.indexOf('{'), r.stdout.lastIndexOf('}') + 1);
    const doc = JSON.parse(json) as Doc;
    expect(doc.stopped.map((s) => [s.name, s.pid, s.signal])).toEqual([['VLLM::EngineCore', mine, 'SIGTERM']]);
    expect(doc.stopped.some((s) => s.pid === theirs)).toBe(false);
    expect(r.stdout).toMatch(/exit 0/);
    expect(r.stdout).toMatch(/mine gone/);
    expect(r.stdout).toMatch(/theirs alive/);
  });
});
