import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { teardown } from '../../../src/run/teardown.js';
import { onRecordWarning } from '../../../src/run/state.js';
import type { UserError } from '../../../src/errors.js';
import { realStopDeps, type StopDeps } from '../../../src/run/stop.js';
import { tempHomes } from '../../helpers/cli.js';
import { isAlive, killStarted, runEnv, spawnLone } from '../../helpers/proc-trees.js';

// `teardown` of a run whose run.json cannot be read (cut short by a full disk, say) while its
// processes live: they carry its run marker, so teardown stops them (one by one, never by group),
// says how it found them, and looks again before it says nothing remains of it.

const home = tempHomes('dd-teardown-unreadable-');
afterEach(() => killStarted());
onRecordWarning(() => {});

const ID = '20261207-210000-000-agg';

async function brokenRunWithProcesses(n: number) {
  const { stateDir } = home();
  mkdirSync(join(stateDir, 'runs', ID), { recursive: true });
  const path = join(stateDir, 'runs', ID, 'run.json');
  writeFileSync(path, `{"id": "${ID}", "state": "rea`);
  const procs = [];
  for (let i = 0; i < n; i++) procs.push(await spawnLone('VLLM::EngineCore', ['3000'], { env: runEnv(stateDir, ID) }));
  return { stateDir, path, procs };
}

describe('teardown of a run whose record cannot be read', () => {
  it('stops every process carrying its marker, each found by it; says so once; nothing remains', async () => {
    const { stateDir, path, procs } = await brokenRunWithProcesses(2);
    const planned: string[] = [];
    const out = await teardown({ stateDir, graceMs: 2000, orphans: false, onPlan: (p) => planned.push(...p.unreadable.map((u) => `${u.id} ${u.pids.length}`)) });
    expect(planned).toEqual([`${ID} 2`]);
    expect(out.unreadable).toEqual([{ id: ID, path, reason: expect.stringMatching(/^not JSON/), pids: expect.arrayContaining(procs.map((p) => p.pid)) }]);
    expect(out.stopped.map((r) => [r.run, r.pid, r.note]).sort()).toEqual(procs.map((p) => [ID, p.pid, 'found by its run marker']).sort());
    expect(out.remaining).toEqual([]);
    for (const p of procs) expect(isAlive(p.pid)).toBe(false);
    const u = out.unreadable![0];
    expect(out.warnings).toEqual([`run ${ID}: its record ${path} cannot be read (${u.reason}); 2 live processes carry its run marker (pid ${u.pids.join(', ')})`]);
  });

  it('one that outlives SIGKILL is reported remaining, once, with the run; the other is stopped', async () => {
    const { stateDir, procs } = await brokenRunWithProcesses(2);
    const [stuckOne, other] = procs;
    const stuck: StopDeps = { ...realStopDeps, kill: (t, sig) => (t === stuckOne.pid || t === -stuckOne.pid ? undefined : realStopDeps.kill(t, sig)) };
    const out = await teardown({ stateDir, graceMs: 100, orphans: false, stopDeps: stuck });
    expect(out.remaining.map((s) => [s.run, s.pid])).toEqual([[ID, stuckOne.pid]]);
    expect(out.stopped.map((r) => r.pid)).toContain(other.pid);
    expect(isAlive(stuckOne.pid)).toBe(true);
    expect(isAlive(other.pid)).toBe(false);
  });

  it('--run naming it: refused as bad input naming the record and why; nothing is signalled', async () => {
    const { stateDir, path, procs } = await brokenRunWithProcesses(1);
    const err = await teardown({ stateDir, runId: ID, graceMs: 100, orphans: false }).then(() => null, (e: unknown) => e as UserError);
    expect(err?.message).toContain(`--run ${ID}: ${path} is not a valid run record: not JSON (`);
    // The way out: plain teardown, which finds its processes by their marker; its logs are not lost.
    expect(err?.fix).toBe(`dynamo-dev teardown   (without --run: stops whatever of it still runs, found by its run marker); its logs stay in ${join(stateDir, 'runs', ID, 'logs')}`);
    expect(isAlive(procs[0].pid)).toBe(true);
  });
});
