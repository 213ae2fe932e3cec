import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { isAlive } from '../helpers/proc-trees.js';
import { records, upHarness } from '../helpers/up-run.js';

// Adversarial leftover (issue 26): a live detached run whose run.json is replaced by a directory.
// Before, status said "no runs recorded" and teardown "no live runs" (exit 0) while its supervisor
// and processes ran on. Its processes (the supervisor included) carry its run marker: status names
// the record and them, teardown stops them.

const up = upHarness('dd-unreadable-');
afterEach(() => up.cleanup());

describe('a live run whose run.json became a directory', () => {
  it('status names the record and the live processes; teardown stops them all, nothing left', async () => {
    const s = await up.setup();
    const r = await runCli(['up', 'agg', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(0);
    const rec = records(s.stateDir)[0];
    const live = [rec.supervisor.pid, ...rec.processes.map((p) => p.pid!)];
    const path = join(s.stateDir, 'runs', rec.id, 'run.json');
    renameSync(path, `${path}.moved`);
    mkdirSync(path);

    const st = await runCli(['status'], s.env);
    expect(st.code).toBe(0);
    expect(st.stdout).not.toMatch(/no runs recorded|no live runs/);
    const line = st.stdout.split('\n').find((l) => l.includes(path));
    expect(line).toMatch(new RegExp(`^run ${rec.id}: its record \\S+ cannot be read \\(not a regular file\\); \\d+ live processes carry its run marker \\(pid [\\d, ]+\\): stop them with dynamo-dev teardown$`));
    const doc = JSON.parse((await runCli(['status', '--json'], s.env)).stdout);
    expect(doc.runs).toEqual([]);
    expect(doc.unreadable).toEqual([{ id: rec.id, path, reason: 'not a regular file', pids: expect.arrayContaining(live) }]);

    const down = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(down.stdout).not.toMatch(/no live runs/);
    expect(down.stdout).toMatch(/found by its run marker/);
    expect(down.stdout).toMatch(/nothing remains: stopped \d+ processes/);
    expect(down.stderr).toContain(`run ${rec.id}: its record ${path} cannot be read (not a regular file)`);
    expect(down.code, down.stdout + down.stderr).toBe(0);
    for (const pid of live) expect(isAlive(pid), `pid ${pid} outlived teardown`).toBe(false);
    renameSync(path, `${path}.dir`);
    renameSync(`${path}.moved`, path);
  });
});
