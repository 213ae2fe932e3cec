import { describe, expect, it } from 'vitest';
import { orphanName, selectOrphans } from '../../../src/run/orphans.js';
import { classifyEngineCmd } from '../../../src/host/procs/engine-procs.js';
import type { ProcessInfo } from '../../../src/host/types.js';

const p = (pid: number, ppid: number, uid: number | null, cmd: string): ProcessInfo => ({
  pid, ppid, uid, user: uid === null ? null : `u${uid}`, cmd, name: cmd.split(' ')[0], startTicks: pid * 10, ageMs: 1000, pgid: pid,
});

const ME = 1000;
const procs: ProcessInfo[] = [
  p(1, 0, 0, '/sbin/init'),
  p(500, 1, ME, 'bash'), // our shell
  p(600, 500, ME, 'node dynamo-dev teardown --orphans'), // us
  p(700, 1, ME, 'VLLM::EngineCore'), // leftover of a SIGKILLed worker: orphan
  p(701, 700, ME, 'VLLM::Worker_TP0_EP0'), // its worker: orphan too
  p(710, 1, ME, 'python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B'), // a leftover worker: orphan
  p(800, 1, 2000, 'VLLM::EngineCore'), // another user's engine: never
  p(801, 1, null, 'VLLM::EngineCore'), // unknown owner: never
  p(900, 1, ME, 'python3 -m dynamo.frontend'), // a live run's frontend
  p(901, 900, ME, 'VLLM::EngineCore'), // child of a live run's process
  p(950, 1, ME, 'VLLM::EngineCore_DP0'), // a live run's escaped engine, recorded in its pids
  p(990, 1, ME, 'python3 train.py'), // not an engine
];

const select = (over: Partial<Parameters<typeof selectOrphans>[1]> = {}) =>
  selectOrphans(procs, { uid: ME, protectedPids: [600, 500], runPids: [900, 950], classify: classifyEngineCmd, ...over }).map((o) => [o.pid, o.kind]);

describe('selectOrphans', () => {
  it('selects own-user engine processes outside live runs, with their kind', () => {
    expect(select()).toEqual([[700, 'vllm-engine'], [701, 'vllm-engine'], [710, 'dynamo']]);
  });
  it('a process of another uid is excluded even when it looks exactly like ours', () => {
    expect(select().some(([pid]) => pid === 800)).toBe(false);
    expect(select({ uid: 2000 })).toEqual([[800, 'vllm-engine']]);
  });
  it('unknown uid (ours or theirs) selects nothing of it', () => {
    expect(select({ uid: null })).toEqual([]);
  });
  it('never ourselves or our ancestors, even when they look like engines', () => {
    const mine = [p(600, 500, ME, 'python3 -m dynamo.vllm'), p(500, 1, ME, 'VLLM::EngineCore')];
    expect(selectOrphans(mine, { uid: ME, protectedPids: [600, 500], runPids: [], classify: classifyEngineCmd })).toEqual([]);
  });
  it('without live runs, their processes are orphans too', () => {
    expect(select({ runPids: [] }).map(([pid]) => pid)).toEqual([700, 701, 710, 900, 901, 950]);
  });
});

describe('orphanName', () => {
  it('the vLLM title or the dynamo module', () => {
    expect(orphanName('VLLM::EngineCore_DP0')).toBe('VLLM::EngineCore_DP0');
    expect(orphanName('/venv/bin/python3 -m dynamo.vllm --model x')).toBe('dynamo.vllm');
    expect(orphanName('/usr/bin/python3 -um dynamo.frontend')).toBe('dynamo.frontend');
  });
});
