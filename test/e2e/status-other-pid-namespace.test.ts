import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { deadPid, killStarted, spawnTree, writeFakeRun } from '../helpers/proc-trees.js';

// Adversarial leftover (issue 26): a run supervised in another pid namespace (an `up` in a container
// that shares the state dir). Its supervisor's pid is that namespace's: from here it is not there,
// and status called the run `orphaned` with no word of why. The supervisor now records its pid
// namespace (/proc/self/ns/pid); status compares it with its own and warns instead.

const homes: ReturnType<typeof tempHome>[] = [];
afterEach(() => {
  killStarted();
  for (const h of homes.splice(0)) h.cleanup();
});

async function runWithSupervisorIn(pidNamespace: string | null) {
  const h = tempHome('dd-pidns-status-');
  homes.push(h);
  const tree = await spawnTree('honour');
  await writeFakeRun(h.stateDir, {
    id: '20261205-120000-000-agg', state: 'ready', supervisor: { pid: deadPid(), startTicks: 1, detached: false },
    processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: [tree.engine] }],
  });
  const path = join(h.stateDir, 'runs', '20261205-120000-000-agg', 'run.json');
  const rec = JSON.parse(readFileSync(path, 'utf8'));
  if (pidNamespace) rec.supervisor.pidNamespace = pidNamespace;
  writeFileSync(path, JSON.stringify(rec));
  return fakeEnv(h);
}

describe('status of a run supervised in another pid namespace', () => {
  it('warns in one line and shows the recorded state, not orphaned; the same record of this namespace is orphaned', async () => {
    const env = await runWithSupervisorIn('pid:[4026531999]');
    const here = readlinkSync('/proc/self/ns/pid');
    const j = await runCli(['status', '--json'], env);
    expect(j.code).toBe(0);
    const doc = JSON.parse(j.stdout).runs[0];
    expect(doc.state).toBe('ready');
    expect(doc.pidNamespace).toEqual({ run: 'pid:[4026531999]', here });
    const warnings = j.stderr.trim().split('\n');
    expect(warnings).toEqual([
      `dynamo-dev: warning: run 20261205-120000-000-agg was supervised in another pid namespace (pid:[4026531999]; this command runs in ${here}): its supervisor (pid ${doc.supervisor.pid} there) cannot be seen from here, so its state is shown as recorded (ready), not judged; run dynamo-dev status where it was started`,
    ]);
    const t = await runCli(['status'], env);
    expect(t.stdout).not.toMatch(/orphaned/);
    expect(t.stderr).toContain('another pid namespace');

    // Control: recorded in this namespace (or by a version that did not record it), it is orphaned.
    for (const ns of [here, null]) {
      const same = JSON.parse((await runCli(['status', '--json'], await runWithSupervisorIn(ns))).stdout).runs[0];
      expect(same.state).toBe('orphaned');
      expect(same.pidNamespace).toBeUndefined();
    }
  });
});
