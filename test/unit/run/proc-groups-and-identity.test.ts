import { afterEach, describe, expect, it, vi } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';
import { deadPid, killStarted, track, waitUntil } from '../../helpers/proc-trees.js';
import {
  childrenOf, groupExists, isGoneState, isSameProcess, readCmdline, readStat, readStartTicks, scanFor,
} from '../../../src/run/proc.js';
import { parseProcStat } from '../../../src/host/procs/parse-proc.js';

// Process identity and group liveness on the live /proc, with processes this file starts (and
// SIGKILLs in afterEach): what teardown and status rely on to tell a run's processes from the
// machine's others.

afterEach(() => {
  vi.restoreAllMocks();
  killStarted();
});

/** A detached group whose leader has exited: only a background `sleep` is left in it. */
async function leaderlessGroup(): Promise<{ pgid: number; member: number }> {
  const leader = spawn('bash', ['-c', 'sleep 3000 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  track(leader.pid!);
  const member = Number(await new Promise<string>((resolve) => leader.stdout!.once('data', (b: Buffer) => resolve(b.toString().trim()))));
  track(member);
  await waitUntil(() => readStat(leader.pid!) === null, 'the leader to exit');
  return { pgid: leader.pid!, member };
}

describe('a zombie or dead /proc entry counts as gone', () => {
  it('states Z and X are gone; running, sleeping and disk-wait are not', () => {
    const zombie = readFileSync(join(FIXTURES, 'proc', 'stat.zombie.txt'), 'utf8');
    const dead = zombie.replace(') Z ', ') X ');
    expect(isGoneState(parseProcStat(zombie)!.state)).toBe(true);
    expect(isGoneState(parseProcStat(dead)!.state)).toBe(true);
    for (const s of ['R', 'S', 'D', 'T', 'I']) expect(isGoneState(s)).toBe(false);
    expect(isGoneState('')).toBe(false);
  });
});

describe('identity of a recorded pid', () => {
  it('a pid whose start time was never recorded is never "the same process", also once it is gone', () => {
    const gone = deadPid();
    expect(readStartTicks(gone)).toBeNull();
    expect(isSameProcess(gone, null)).toBe(false);
  });

  it('the command line of a gone process is empty; a live one\'s has no padding at its ends', async () => {
    expect(readCmdline(deadPid())).toBe('');
    // The last argument ends in spaces (as padded process titles do); `; :` keeps bash from exec'ing sleep.
    const child = spawn('bash', ['-c', 'sleep 3000; :', 'VLLM::EngineCore  '], { detached: true, stdio: 'ignore' });
    track(child.pid!);
    await waitUntil(() => childrenOf(child.pid!)?.length === 1, 'bash to start sleep');
    expect(readCmdline(child.pid!)).toBe('bash -c sleep 3000; : VLLM::EngineCore');
  });

  it('the direct children of a process, exactly (the kernel\'s list ends in a space)', async () => {
    const child = spawn('bash', ['-c', 'sleep 3000 & sleep 3000 & wait'], { detached: true, stdio: 'ignore' });
    track(child.pid!);
    const kids = await waitUntil(() => {
      const c = childrenOf(child.pid!);
      return c && c.length === 2 ? c : null;
    }, 'two children');
    expect(kids.every((k) => readStat(k)?.ppid === child.pid)).toBe(true);
    expect(childrenOf(deadPid())).toEqual([]);
  });
});

describe('process groups', () => {
  it('a group lives on in a member after its leader exited; a pid that leads no group is no group', async () => {
    const { pgid, member } = await leaderlessGroup();
    expect(groupExists(pgid)).toBe(true);
    expect(groupExists(member)).toBe(false);
    expect(groupExists(deadPid())).toBe(false);
  });

  it('a group the system will not let us signal (another user\'s: EPERM) exists; any other refusal means none', () => {
    const kill = vi.spyOn(process, 'kill');
    kill.mockImplementation(() => {
      throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
    });
    expect(groupExists(4_000_000)).toBe(true);
    expect(kill).toHaveBeenCalledWith(-4_000_000, 0);
    kill.mockImplementation(() => {
      throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    });
    expect(groupExists(4_000_000)).toBe(false);
  });

  it('scanFor: one live group among dead ones is enough to read every process, so its leaderless members are found', async () => {
    const { pgid, member } = await leaderlessGroup();
    const scan = await scanFor([pgid], [deadPid(), pgid]);
    expect(scan.find((s) => s.pid === member)).toMatchObject({ pid: member, pgid });
    // The recorded leader is gone: it is not in the scan.
    expect(scan.some((s) => s.pid === pgid)).toBe(false);
  });
});
