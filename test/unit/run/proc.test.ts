import { describe, expect, it, afterEach } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';
import {
  ancestorsIn, descendants, descendantsIn, groupMembers, isSameProcess, membersOf,
  mergeDescendants, readStartTicks, type ProcStat,
} from '../../../src/run/proc.js';
import { killStarted, track, waitUntil } from '../../helpers/proc-trees.js';
import { parseCmdline, parseProcStat } from '../../../src/host/procs/parse-proc.js';

const sample = (name: string) => readFileSync(join(FIXTURES, 'proc', name), 'utf8');
afterEach(() => killStarted());

describe('parseProcStat on real /proc/PID/stat text', () => {
  it('reads pid, state, ppid, pgid, session and start ticks (field 22)', () => {
    expect(parseProcStat(sample('stat.running.txt'))).toEqual({
      pid: 6126, comm: 'cat', state: 'R', ppid: 6113, pgid: 6113, session: 4091, startTicks: 44844,
    });
  });

  it('a comm with spaces and parentheses does not shift the fields', () => {
    expect(parseProcStat(sample('stat.comm-with-parens.txt'))).toMatchObject({
      pid: 6863, comm: 'a) b (c', state: 'S', ppid: 6862, pgid: 6855, startTicks: 48172,
    });
  });

  it('a zombie parses with state Z (callers treat it as gone)', () => {
    expect(parseProcStat(sample('stat.zombie.txt'))).toMatchObject({ pid: 6959, state: 'Z', startTicks: 48355 });
  });

  it('garbage -> null', () => {
    expect(parseProcStat('')).toBeNull();
    expect(parseProcStat('12 (x) S 1 2')).toBeNull();
  });
});

describe('parseCmdline', () => {
  it('joins the NUL-separated argv of an exec -a VLLM::EngineCore process', () => {
    expect(parseCmdline(sample('cmdline.exec-a.bin')).trim()).toBe('VLLM::EngineCore 3000');
    expect(parseCmdline('')).toBe('');
  });
});

const st = (pid: number, ppid: number, pgid: number, startTicks = 100): ProcStat => ({ pid, comm: 'x', state: 'S', ppid, pgid, session: 1, startTicks });

describe('pure scans', () => {
  const scan = [st(1, 0, 1), st(10, 1, 10), st(11, 10, 10), st(12, 11, 12), st(13, 12, 12), st(20, 1, 20), st(21, 20, 10)];
  it('descendantsIn follows the ppid chain across groups and sessions', () => {
    expect(descendantsIn(scan, 10).map((s) => s.pid).sort()).toEqual([11, 12, 13]);
    expect(descendantsIn(scan, 13)).toEqual([]);
  });
  it('membersOf is by process group, whoever the parent is', () => {
    expect(membersOf(scan, 10)).toEqual([10, 11, 21]);
  });
  it('ancestorsIn walks up to init', () => {
    expect(ancestorsIn(scan, 13)).toEqual([12, 11, 10, 1]);
  });
});

describe('mergeDescendants (what run.json keeps of the engine children)', () => {
  const worker = 'python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B';
  it('an engine first seen between fork and exec gets its VLLM::EngineCore command line once it has exec\'d', () => {
    // Caught mid-spawn under load: same pid and start ticks, but still the parent's command line.
    const early = [{ pid: 41, startTicks: 900, cmd: worker }];
    expect(mergeDescendants(early, [{ pid: 41, startTicks: 900, cmd: 'VLLM::EngineCore' }])).toEqual([{ pid: 41, startTicks: 900, cmd: 'VLLM::EngineCore' }]);
    expect(mergeDescendants([{ pid: 41, startTicks: 900, cmd: '' }], [{ pid: 41, startTicks: 900, cmd: 'VLLM::EngineCore' }])![0].cmd).toBe('VLLM::EngineCore');
  });

  it('keeps children that have exited (teardown checks them by start time), adds new ones, and says when nothing changed', () => {
    const known = [{ pid: 41, startTicks: 900, cmd: 'VLLM::EngineCore' }, { pid: 40, startTicks: 899, cmd: 'bash pyenv-exec' }];
    expect(mergeDescendants(known, [{ pid: 41, startTicks: 900, cmd: 'VLLM::EngineCore' }])).toBeNull();
    // A reused pid with another start time is another process: recorded beside the old one.
    expect(mergeDescendants(known, [{ pid: 40, startTicks: 1500, cmd: 'VLLM::Worker_TP0' }])).toEqual([...known, { pid: 40, startTicks: 1500, cmd: 'VLLM::Worker_TP0' }]);
    // An unreadable command line (zombie, exiting) never wipes what was recorded.
    expect(mergeDescendants(known, [{ pid: 41, startTicks: 900, cmd: '' }])).toBeNull();
  });
});

describe('live /proc', () => {
  it('readStartTicks / isSameProcess: our own process, and a wrong start time is another process', () => {
    const t = readStartTicks(process.pid);
    expect(t).toBeGreaterThan(0);
    expect(isSameProcess(process.pid, t)).toBe(true);
    expect(isSameProcess(process.pid, t! + 1)).toBe(false);
    expect(isSameProcess(process.pid, null)).toBe(false);
    expect(readStartTicks(2 ** 22 + 1)).toBeNull();
  });

  it('groupMembers and descendants of a detached tree, with the engine command line', async () => {
    const child = spawn('bash', ['-c', '(exec -a VLLM::EngineCore sleep 3000) & wait'], { detached: true, stdio: 'ignore' });
    track(child.pid!);
    const d = await waitUntil(() => {
      const list = descendants(child.pid!);
      return list.some((x) => x.cmd === 'VLLM::EngineCore 3000') ? list : null;
    }, 'engine');
    const engine = d.find((x) => x.cmd.startsWith('VLLM::'))!;
    expect(engine.startTicks).toBe(readStartTicks(engine.pid));
    expect(groupMembers(child.pid!).sort()).toEqual([child.pid!, engine.pid].sort());
  });
});
