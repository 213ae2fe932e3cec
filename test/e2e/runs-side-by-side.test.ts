import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';

// Several runs from one state directory: `up --name NAME` starts a second run beside a live one,
// with ports of its own (the recipe's ranges moved past those the live run holds), and every
// command's --run takes the name. Without a name the one-run rule stands and says how to run a second.

const up = upHarness('dd-side-');
afterEach(() => up.cleanup());

describe('up --name: two recipes side by side', () => {
  it('each ready on its own ports, found by name, restarted and torn down by name; nothing left', async () => {
    const s = await up.setup();
    const a = await runCli(['up', 'agg-router', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(a.code, a.stderr).toBe(0);

    // The same recipe ports again: a second run without a name is refused, and told how.
    const again = await runCli(['up', 'mocker', '--detach', '--no-preflight', ...s.sets], s.env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^dynamo-dev: another run is live: run \S+-agg-router \(ready\); one up per state directory unless each run has a name\nfix: dynamo-dev up mocker --name NAME/);
    const badName = await runCli(['up', 'mocker', '--name', 'two words', '--no-preflight'], s.env);
    expect(badName.code).toBe(2);
    expect(badName.stderr.trim()).toBe(`dynamo-dev: --name: "two words" is not a run name: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);

    const b = await runCli(['up', 'mocker', '--name', 'b', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(b.code, b.stderr).toBe(0);
    const { http, system } = s.ports;
    // http and system ports of run a are held: b's ranges start past them, and the line says so.
    expect(b.stdout).toContain(`ports: http ${http + 3}, system ${system + 3}-${system + 4} (the recipe's ${http}, ${system}, ${system + 1} held by run `);
    const dup = await runCli(['up', 'mocker', '--name', 'b', '--no-preflight', ...s.sets], s.env);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toMatch(/--name: a run named b is live/);

    const runs = JSON.parse((await runCli(['status', '--json'], s.env)).stdout).runs as { id: string; name: string | null; state: string; frontendUrl: string }[];
    expect(runs.map((r) => [r.name ?? '-', r.state]).sort()).toEqual([['-', 'ready'], ['b', 'ready']]);
    const rb = runs.find((r) => r.name === 'b')!;
    const ra = runs.find((r) => r.name === null)!;
    expect(rb.frontendUrl).toBe(`http://127.0.0.1:${http + 3}`);
    for (const r of [ra, rb]) expect((await fetch(`${r.frontendUrl}/v1/models`)).ok).toBe(true);

    // --run NAME everywhere: status, logs, diagnose, restart (a mocker worker: ready when the frontend counts it).
    expect(JSON.parse((await runCli(['status', '--run', 'b', '--json'], s.env)).stdout).runs[0].id).toBe(rb.id);
    expect((await runCli(['logs', 'frontend', '--run', 'b', '-n', '1'], s.env)).code).toBe(0);
    const rs = await runCli(['restart', 'agg-0', '--run', 'b'], s.env, { timeoutMs: 30_000 });
    expect(rs.code, rs.stdout + rs.stderr).toBe(0);
    expect(rs.stdout).toMatch(/✓ agg-0 is ready again .*; run \S+-mocker-b is ready$/m);
    const which = await runCli(['restart', 'agg-0'], s.env);
    expect(which.code).toBe(2);
    expect(which.stderr).toMatch(/restart: 2 runs are live \(.*\); say which with --run ID\|NAME/);

    const downB = await runCli(['teardown', '--run', 'b', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(downB.code, downB.stdout).toBe(0);
    const after = JSON.parse((await runCli(['status', '--json'], s.env)).stdout).runs as { name: string | null; state: string }[];
    expect(after.map((r) => [r.name ?? '-', r.state]).sort()).toEqual([['-', 'ready'], ['b', 'stopped']]);
    const downA = await runCli(['teardown', '--run', ra.id, '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(downA.code, downA.stdout).toBe(0);
    expect(records(s.stateDir)).toHaveLength(2);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});
