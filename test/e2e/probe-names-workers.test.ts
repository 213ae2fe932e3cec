import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';

// probe of a live run names the workers by the run's processes (agg-0, agg-1), not by Dynamo's
// worker ids: the id the frontend reports (nvext.worker_id) is the instance its /health lists, whose
// request-plane port (the transport, as the real 1.6.1 lists it) is held by one of the run's
// process groups. The fake vLLM worker logs no line naming its own id, so only that port tells.

const up = upHarness('dd-probe-names-');
afterEach(() => up.cleanup());

describe('probe names workers by their process', () => {
  it('--json maps every worker id to agg-0/agg-1; the report shows those names; nothing left after teardown', async () => {
    const s = await up.setup();
    const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(0);
    const args = ['probe', '--prefixes', '6', '--repeats', '2', '--prefix-tokens', '64', '--seed', '3'];

    const j = await runCli([...args, '--json'], s.env, { timeoutMs: 30_000 });
    expect(j.code, j.stderr).toBe(0);
    const doc = JSON.parse(j.stdout);
    expect(doc.workers.length).toBeGreaterThan(0);
    expect(Object.keys(doc.workerNames).sort()).toEqual([...doc.workers].sort());
    expect(new Set(Object.values(doc.workerNames)).size).toBe(doc.workers.length);
    for (const name of Object.values(doc.workerNames)) expect(['agg-0', 'agg-1']).toContain(name);

    const t = await runCli(args, s.env, { timeoutMs: 30_000 });
    expect(t.code, t.stderr).toBe(0);
    // The per-prefix table names processes, never w1/w2; the legend gives each its id.
    const rows = t.stdout.split('\n').filter((l) => /^\s+\d+  /.test(l));
    expect(rows).toHaveLength(6);
    for (const row of rows) expect(row).toMatch(/^\s+\d+  agg-[01](,agg-[01])?\s/);
    expect(t.stdout).toMatch(/^workers: agg-[01] = \d+(, agg-[01] = \d+)?$/m);
    expect(t.stdout).not.toMatch(/\bw1\b/);

    const down = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout).toBe(0);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
    expect(records(s.stateDir)[0].state).toBe('stopped');
  });
});
