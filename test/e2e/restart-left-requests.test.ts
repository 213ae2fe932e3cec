import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';
import type { RunRecord } from '../../src/run/types.js';

// A `restart` request is a file in runs/<id>/restart/ that the run's supervisor reads when woken.
// One left by a restart command that died (killed while waiting) must never be acted on later (it
// was: the next restart SIGKILLed that worker with grace 0, unasked, nothing said); a FIFO or a
// huge file where a request is read must not hang or bloat the supervisor (it blocked for good:
// the run stopped being supervised, teardown needed SIGKILL).

const up = upHarness('dd-restart-left-');
afterEach(() => up.cleanup());
const proc = (rec: RunRecord, name: string) => rec.processes.find((p) => p.name === name)!;

describe('restart with requests left in the run\'s restart folder', () => {
  it('a request of a command that ended is said and withdrawn, never acted on; a FIFO and a 64 MiB file there are left alone; the asked restart works and teardown needs no SIGKILL', async () => {
    const s = await up.setup();
    const started = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--json', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(started.code, started.stderr).toBe(0);
    const rec = records(s.stateDir)[0];
    const dir = join(s.stateDir, 'runs', rec.id, 'restart');
    mkdirSync(dir, { recursive: true });
    // A command that asked to restart agg-0 with grace 0, then died before the supervisor took it.
    const dead = spawnSync('true').pid!;
    const leftId = `1700000000000-${dead}`;
    writeFileSync(join(dir, `${leftId}.request`), `${JSON.stringify({ id: leftId, process: 'agg-0', graceMs: 0, readyTimeoutMs: 0, by: { pid: dead, startTicks: 1 } })}\n`);
    writeFileSync(join(dir, `${leftId}.events`), '');
    execFileSync('mkfifo', [join(dir, '1700000000001-1.request')]);
    writeFileSync(join(dir, '1700000000002-1.request'), '');
    execFileSync('truncate', ['-s', '64M', join(dir, '1700000000002-1.request')]);

    const r = await runCli(['restart', 'agg-1', '--grace', '2'], s.env, { timeoutMs: 30_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`! the restart of agg-0 asked by pid ${dead} was not acted on: that command ended before the run's supervisor took it; withdrawn`);
    const after = records(s.stateDir)[0];
    expect(proc(after, 'agg-0').pid).toBe(proc(rec, 'agg-0').pid);
    expect(proc(after, 'agg-0').restarts ?? 0).toBe(0);
    expect(proc(after, 'agg-1').restarts).toBe(1);
    expect(readFileSync(join(dir, `${leftId}.events`), 'utf8')).toContain('"ok":false');
    const left = readdirSync(dir).filter((n) => n.startsWith('17000000000'));
    expect(left.sort()).toEqual([`${leftId}.events`, '1700000000001-1.request', '1700000000002-1.request']);
    expect(lstatSync(join(dir, '1700000000001-1.request')).isFIFO()).toBe(true);

    // The supervisor still supervises: a second restart is answered, teardown stops it with SIGTERM.
    const again = await runCli(['restart', 'agg-0', '--grace', '2', '--json'], s.env, { timeoutMs: 30_000 });
    expect(again.code, again.stdout).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, withdrawn: [] });
    const down = await runCli(['teardown', '--grace', '5', '--json'], s.env, { timeoutMs: 30_000 });
    expect(down.code, down.stdout).toBe(0);
    expect(down.stdout).not.toContain('SIGKILL');
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});
