import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readStartTicks } from '../../../src/run/proc.js';
import { markerFor, RUN_MARKER } from '../../../src/run/run-scan.js';
import { survivors } from '../../helpers/runs.js';

// The e2e tests' "nothing left" (survivors) after stop 36's CI failed on "frontend group member
// 27908": a recorded group's number is free once its leader is gone, and another test's detached
// process given that pid leads a group of the same number. Only what is the run's counts.

const dirs: string[] = [];
const kids: ChildProcess[] = [];
afterEach(() => {
  for (const k of kids.splice(0)) k.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A detached `sleep` (it leads its own group), with `env`; resolves once it runs. */
async function groupLeader(env: NodeJS.ProcessEnv): Promise<number> {
  const k = spawn('sleep', ['60'], { detached: true, stdio: 'ignore', env });
  kids.push(k);
  await once(k, 'spawn');
  return k.pid!;
}

/** A state dir whose run records `frontend` with this pid and pgid, started at `startTicks`. */
function stateWith(pid: number, startTicks: number | null): string {
  const stateDir = mkdtempSync(join(tmpdir(), 'dd-survivors-'));
  dirs.push(stateDir);
  mkdirSync(join(stateDir, 'runs', 'r1'), { recursive: true });
  const rec = {
    id: 'r1', state: 'stopped', supervisor: { pid: 1, startTicks: 0 },
    processes: [{ name: 'frontend', pid, pgid: pid, startTicks, descendants: [] }],
  };
  writeFileSync(join(stateDir, 'runs', 'r1', 'run.json'), JSON.stringify(rec));
  return stateDir;
}

describe('survivors (test helper): a recorded group number reused by a stranger', () => {
  it('a stranger leading a group of the recorded number (another start time, no marker) is not the run\'s', async () => {
    const pid = await groupLeader({ PATH: process.env.PATH });
    const stateDir = stateWith(pid, readStartTicks(pid)! - 1);
    expect(survivors(stateDir)).toEqual([]);
  });

  it('one carrying the run\'s marker is, and so is the recorded leader itself: named with its command line', async () => {
    const stateDir = stateWith(0, null);
    const marked = await groupLeader({ PATH: process.env.PATH, [RUN_MARKER]: markerFor(stateDir, 'r1') });
    writeFileSync(join(stateDir, 'runs', 'r1', 'run.json'), JSON.stringify({
      id: 'r1', state: 'stopped', supervisor: { pid: 1, startTicks: 0 },
      processes: [{ name: 'frontend', pid: marked, pgid: marked, startTicks: 1, descendants: [] }],
    }));
    expect(survivors(stateDir)).toEqual([`frontend group member ${marked} sleep 60`]);

    const leader = await groupLeader({ PATH: process.env.PATH });
    const other = stateWith(leader, readStartTicks(leader));
    expect(survivors(other)).toEqual([`frontend group member ${leader} sleep 60`]);
  });
});
