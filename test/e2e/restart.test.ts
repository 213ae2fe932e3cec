import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';
import { waitUntil } from '../helpers/proc-trees.js';
import { isSameProcess } from '../../src/run/proc.js';
import { workersSeen } from '../../src/run/readiness.js';
import type { RunRecord } from '../../src/run/types.js';

// `dynamo-dev restart PROCESS` end to end through the built binary, with the fake frontend and
// workers: the run's own (background) supervisor stops the process as teardown would and starts it
// again from the plan; status goes from degraded back to ready, the frontend counts every worker.

const up = upHarness('dd-restart-');
afterEach(() => up.cleanup());

const proc = (rec: RunRecord, name: string) => rec.processes.find((p) => p.name === name)!;

async function readyRun(prepare: (s: Awaited<ReturnType<typeof up.setup>>) => void = () => {}) {
  const s = await up.setup();
  prepare(s);
  const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--json', ...s.sets], s.env, { timeoutMs: 25_000 });
  expect(r.code, r.stderr).toBe(0);
  return { s, rec: records(s.stateDir)[0] };
}

/** How many workers the frontend counts (its /health instances, as readiness counts them). */
async function counted(url: string): Promise<number | null> {
  const res = await fetch(`${url}/health`);
  return workersSeen({ ok: res.ok, status: res.status, body: await res.json(), error: null } as never);
}

const statusOf = async (env: Record<string, string | undefined>) => JSON.parse((await runCli(['status', '--json'], env)).stdout).runs[0];

describe('restart a worker killed with SIGKILL', () => {
  it('status degraded, restart agg-1 exits 0, status ready with both workers counted, probe works, nothing left after teardown', async () => {
    const { s, rec } = await readyRun();
    const old = proc(rec, 'agg-1');
    process.kill(old.pid!, 'SIGKILL');
    await waitUntil(() => proc(records(s.stateDir)[0], 'agg-1').endedAt ?? null, 'the supervisor to record agg-1\'s death', 10_000);
    expect(await statusOf(s.env)).toMatchObject({ state: 'degraded', lost: [{ name: 'agg-1' }] });

    const r = await runCli(['restart', 'agg-1'], s.env, { timeoutMs: 30_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^restart agg-1 · run \S+-agg-router$/m);
    // What was left of its group (its engine core) is stopped before the new start.
    expect(r.stdout).toMatch(/stopped agg-1 \(pid \d+\) with SIGTERM .*leader had already exited/);
    expect(r.stdout).toMatch(/agg-1 logged its KV cache: [\d,]+ tokens/);
    expect(r.stdout).toMatch(/✓ agg-1 is ready again in [\d.]+ m?s; run \S+ is ready$/m);

    const after = records(s.stateDir)[0];
    const agg1 = proc(after, 'agg-1');
    expect(after.state).toBe('ready');
    expect(agg1).toMatchObject({ state: 'ready', restarts: 1, exitCode: null, signal: null, endedAt: null });
    expect(agg1.pid).not.toBe(old.pid);
    // The supervisor stays the parent of the new process: it records its exit as it did the first one's.
    expect(readFileSync(`/proc/${agg1.pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]).toBe(String(after.supervisor.pid));
    // The log goes on after a marker line; the first start's lines stay above it.
    const log = readFileSync(agg1.log, 'utf8');
    const marker = log.search(/^--- dynamo-dev restart \S+: agg-1 stopped and started again \(restart 1\) ---$/m);
    expect(marker).toBeGreaterThan(0);
    expect(log.slice(0, marker)).toMatch(/GPU KV cache size/);
    expect(log.slice(marker)).toMatch(/GPU KV cache size/);

    expect(await statusOf(s.env)).toMatchObject({ state: 'ready', lost: [] });
    expect(await counted(after.frontendUrl)).toBe(2);
    const probe = await runCli(['probe', '--prefixes', '2', '--repeats', '2', '--prefix-tokens', '64', '--json'], s.env, { timeoutMs: 30_000 });
    expect(probe.code, probe.stderr).toBe(0);

    const down = await runCli(['teardown', '--grace', '2', '--json'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout).toBe(0);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});

describe('restart the frontend, a worker that does not come back, and bad input', () => {
  it('frontend: 0 once every worker is counted again; a failing start: 1 with its cause, degraded; a bad name: 2', async () => {
    // Only agg-0 reads it (FAKE_WORKER_SCENARIO_FILE_<its system port>), at each start, once it exists.
    const { s, rec } = await readyRun((x) => void (x.env[`FAKE_WORKER_SCENARIO_FILE_${x.ports.system}`] = join(x.dir, 'agg-0.scenario')));
    const scenario = join(s.dir, 'agg-0.scenario');

    const fe = await runCli(['restart', 'frontend', '--json'], s.env, { timeoutMs: 30_000 });
    expect(fe.code, fe.stdout + fe.stderr).toBe(0);
    const doc = JSON.parse(fe.stdout);
    expect(doc).toMatchObject({ ok: true, process: 'frontend', status: 'ready', run: rec.id });
    expect(doc.events.map((e: { event: string }) => e.event)).toEqual(['taken', 'stopped', 'starting', 'counted', 'done']);
    expect(proc(records(s.stateDir)[0], 'frontend').pid).not.toBe(proc(rec, 'frontend').pid);
    expect(await counted(rec.frontendUrl)).toBe(2);

    // The environment of a restarted process is the run's (the supervisor's): the scenario comes through the file.
    writeFileSync(scenario, 'error804');
    const bad = await runCli(['restart', 'agg-0', '--run', rec.id], s.env, { timeoutMs: 30_000 });
    expect(bad.code, bad.stdout + bad.stderr).toBe(1);
    expect(bad.stdout).toMatch(/cause: CUDA Error 804.*\[cuda\.error804\]/);
    expect(bad.stdout).toMatch(/✗ agg-0 did not come back: agg-0 exited with code 1 while starting again; run \S+ is degraded \(agg-0 exited with code 1\)$/m);
    expect(await statusOf(s.env)).toMatchObject({ state: 'degraded', lost: [{ name: 'agg-0' }] });
    expect(isSameProcess(rec.supervisor.pid, rec.supervisor.startTicks)).toBe(true);

    const nope = await runCli(['restart', 'agg-9'], s.env);
    expect(nope.code).toBe(2);
    expect(nope.stderr.trim()).toBe(`dynamo-dev: restart: no process "agg-9" in run ${rec.id}; its processes: frontend, agg-0, agg-1`);
    const noRun = await runCli(['restart', 'agg-0', '--run', 'nope'], s.env);
    expect(noRun.code).toBe(2);
    expect(noRun.stderr).toMatch(/^dynamo-dev: --run: no run "nope"/);

    const down = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout).toBe(0);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
    const none = await runCli(['restart', 'agg-0'], s.env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no live run in .*: nothing to restart/);
  });
});
