import { describe, expect, it } from 'vitest';
import { lostProcesses } from '../../../src/run/losses.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';

// A run still starting: processes waiting for their turn (never started yet) are not lost, but one
// that did start and is not alive any more is, before the run ever got ready.

const proc = (name: string, o: Partial<ProcessRecord> = {}): ProcessRecord => ({
  name, role: 'agg', pid: 100, pgid: 100, startTicks: 5, startedAt: null, argv: [], env: {}, ports: {}, gpuMemoryUtilization: 0.38,
  state: 'starting', kvTokens: null, exitCode: null, signal: null, log: `/s/${name}.log`, descendants: [], ...o,
});
const record = (processes: ProcessRecord[]): RunRecord => ({ id: 'r', state: 'starting', processes, updatedAt: 'before' } as unknown as RunRecord);
const dead = (name: string) => ({ name, alive: false, recycled: false, pids: [] });

describe('what a starting run has lost', () => {
  it('a started process that died is lost; the one still waiting for its turn is not', () => {
    const rec = record([proc('agg-0', { exitCode: 1, state: 'failed' }), proc('agg-1', { pid: null, pgid: null, startTicks: null, state: 'waiting' })]);
    expect(lostProcesses(rec, { perProcess: [dead('agg-0'), dead('agg-1')] }).map((x) => [x.name, x.how])).toEqual([['agg-0', 'exited']]);
  });
});
