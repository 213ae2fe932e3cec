import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';
import { waitUntil } from '../helpers/proc-trees.js';
import { workersSeen } from '../../src/run/readiness.js';
import type { RunRecord } from '../../src/run/types.js';

// `up --restart on-failure[:N]` end to end through the built binary with the fake frontend and
// workers: the detached run's supervisor starts a worker killed after ready again (the restart
// machinery of `dynamo-dev restart`), at most N times; then the run stays degraded and says why.

const up = upHarness('dd-up-restart-');
afterEach(() => up.cleanup());

const proc = (rec: RunRecord, name: string) => rec.processes.find((p) => p.name === name)!;

async function counted(url: string): Promise<number | null> {
  const res = await fetch(`${url}/health`);
  return workersSeen({ ok: res.ok, status: res.status, body: await res.json(), error: null } as never);
}

describe('up --restart on-failure:1 of a detached agg-router run', () => {
  it('agg-1 killed -9: started again, ready, counted by the frontend, shown by status; killed again: degraded, limit reached, named; nothing left after teardown', async () => {
    const s = await up.setup();
    const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--json', '--restart', 'on-failure:1', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(0);
    const rec = records(s.stateDir)[0];
    expect(rec.restartPolicy).toEqual({ mode: 'on-failure', max: 1 });
    const first = proc(rec, 'agg-1');

    process.kill(first.pid!, 'SIGKILL');
    const back = await waitUntil(() => {
      const now = records(s.stateDir)[0];
      return now.state === 'ready' && proc(now, 'agg-1').restarts === 1 ? now : null;
    }, 'agg-1 to be started again and the run ready', 30_000);
    const agg1 = proc(back, 'agg-1');
    expect(agg1.pid).not.toBe(first.pid);
    expect(agg1.state).toBe('ready');
    expect(agg1.restartHistory).toEqual([expect.objectContaining({ by: 'on-failure', cause: 'was killed by SIGKILL', signal: 'SIGKILL', outcome: 'ready' })]);
    expect(await counted(back.frontendUrl)).toBe(2);
    // The log goes on after a marker that says why.
    expect(readFileSync(agg1.log, 'utf8')).toMatch(/^--- dynamo-dev restart \S+: agg-1 was killed by SIGKILL; started again by --restart on-failure:1 \(restart 1\) ---$/m);

    const st = await runCli(['status', '--json'], s.env);
    const doc = JSON.parse(st.stdout).runs[0];
    expect(doc).toMatchObject({ state: 'ready', lost: [], restartPolicy: { mode: 'on-failure', max: 1 } });
    expect(doc.processes.find((p: { name: string }) => p.name === 'agg-1')).toMatchObject({
      ready: true, restarts: 1, restartsEnded: null, restartHistory: [{ by: 'on-failure', cause: 'was killed by SIGKILL', outcome: 'ready' }],
    });
    const text = (await runCli(['status'], s.env)).stdout;
    expect(text).toMatch(/^ {2}· agg-1 restarted 1 time \(--restart on-failure:1\); last: was killed by SIGKILL, started again at [\d:]+ \(\S+ ago\), ready again$/m);

    // Killed again: the limit (1) is reached; the run is degraded and says why.
    process.kill(agg1.pid!, 'SIGKILL');
    await waitUntil(() => proc(records(s.stateDir)[0], 'agg-1').restartsEnded ?? null, 'the supervisor to give up on agg-1', 10_000);
    const after = records(s.stateDir)[0];
    expect(after.state).toBe('degraded');
    expect(proc(after, 'agg-1')).toMatchObject({ state: 'failed', restarts: 1, signal: 'SIGKILL' });
    const j2 = JSON.parse((await runCli(['status', '--json'], s.env)).stdout).runs[0];
    expect(j2).toMatchObject({ state: 'degraded', lost: [{ name: 'agg-1' }] });
    expect(j2.processes.find((p: { name: string }) => p.name === 'agg-1').restartsEnded.reason).toBe('restart limit reached: restarted 1 time already (--restart on-failure:1)');
    const t2 = await runCli(['status'], s.env);
    expect(t2.stdout).toMatch(/degraded: agg-1 killed by SIGKILL [^\n]*, restart limit reached/);
    expect(t2.stdout).toContain('  ! agg-1 not restarted: restart limit reached: restarted 1 time already (--restart on-failure:1)\n');
    expect(await counted(after.frontendUrl)).toBe(1);

    const down = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout).toBe(0);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});

describe('up --restart: what it does not restart, and bad values', () => {
  it('a worker that dies before the run was ever ready is still a failure of up (exit 1), never restarted', async () => {
    const s = await up.setup();
    s.env[`FAKE_WORKER_SCENARIO_${s.ports.system + 1}`] = 'error804';
    const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--restart', 'on-failure', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const rec = records(s.stateDir)[0];
    expect(rec.state).toBe('failed');
    expect(proc(rec, 'agg-1')).toMatchObject({ state: 'failed' });
    expect(proc(rec, 'agg-1').restarts ?? 0).toBe(0);
    expect(proc(rec, 'agg-1').restartHistory ?? []).toEqual([]);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });

  it.each([
    ['on-failure:0', /"on-failure:0": N must be a whole number 1-1000 \(omit it for no limit\)/],
    ['always', /"always" is not a restart policy \(only failures are restarted: a worker that exits 0 meant to\)/],
    ['on-failure:x', /"on-failure:x": N must be a whole number 1-1000/],
  ])('--restart %s: one line naming the flag and what is valid, exit 2, nothing started', async (value, why) => {
    const s = await up.setup();
    const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--restart', value, ...s.sets], s.env, { timeoutMs: 15_000 });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^dynamo-dev: --restart: /);
    expect(lines[0]).toMatch(why);
    expect(lines[0]).toContain('valid: on-failure (restart a worker that dies after the run was ready, no limit) or on-failure:N (at most N times per worker, N a whole number 1-1000)');
    expect(records(s.stateDir)).toEqual([]);
    expect(r.stdout).toBe('');
  });
});

describe('up --restart on-failure without a limit: a crash loop backs off', () => {
  it('a worker that dies again soon after each restart is started again after 100 ms, 200 ms, 400 ms, ... (docker\'s back-off), recorded for status', { timeout: 90_000 }, async () => {
    const s = await up.setup({ FAKE_DIE_AFTER_MS: '1500' });
    // Only agg-0 reads the file (at each start): empty at first, then it dies 1.5 s after each start.
    const scenario = join(s.dir, 'agg-0.scenario');
    writeFileSync(scenario, '');
    s.env[`FAKE_WORKER_SCENARIO_FILE_${s.ports.system}`] = scenario;
    const r = await runCli(['up', 'mocker', '--detach', '--no-preflight', '--restart', 'on-failure', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(0);
    writeFileSync(scenario, 'die-after-ready');
    process.kill(proc(records(s.stateDir)[0], 'agg-0').pid!, 'SIGKILL');
    const looped = await waitUntil(() => {
      const p = proc(records(s.stateDir)[0], 'agg-0');
      return (p.restartHistory ?? []).length >= 4 ? p : null;
    }, 'agg-0 to be restarted 4 times', 60_000);
    // Each death came within 10 s of its start: each wait doubled (the 4th restart waited 800 ms).
    expect(looped.restartBackoff).toMatchObject({ delayMs: 800 });
    expect(looped.restartBackoff!.upMs).toBeLessThan(10_000);
    expect(looped.restartHistory!.every((h) => h.by === 'on-failure')).toBe(true);
    const doc = JSON.parse((await runCli(['status', '--json'], s.env)).stdout).runs[0];
    expect(doc.processes.find((p: { name: string }) => p.name === 'agg-0').restartBackoff).toMatchObject({ delayMs: expect.any(Number) });
    writeFileSync(scenario, '');
    const down = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout).toBe(0);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});

describe('what counts toward on-failure:N', () => {
  it('restarts by `dynamo-dev restart` do not: after two of them, a death is still restarted by on-failure:1', { timeout: 120_000 }, async () => {
    const s = await up.setup();
    const r = await runCli(['up', 'mocker', '--detach', '--no-preflight', '--restart', 'on-failure:1', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(0);
    for (let i = 0; i < 2; i++) {
      const rs = await runCli(['restart', 'agg-0', '--grace', '2'], s.env, { timeoutMs: 60_000 });
      expect(rs.code, rs.stdout + rs.stderr).toBe(0);
    }
    process.kill(proc(records(s.stateDir)[0], 'agg-0').pid!, 'SIGKILL');
    const back = await waitUntil(() => {
      const now = records(s.stateDir)[0];
      const p = proc(now, 'agg-0');
      return now.state === 'ready' && p.restarts === 3 && p.restartHistory?.[2]?.outcome === 'ready' ? p : null;
    }, 'agg-0 to be restarted by the policy', 30_000);
    expect(back.restartHistory!.map((h) => h.by)).toEqual(['command', 'command', 'on-failure']);
    expect(back.restartsEnded ?? null).toBeNull();
    const down = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout).toBe(0);
  });
});
