import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/procs.leftover.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { ProcessInfo } from '../../../src/host/types.js';
import type { RunRecord } from '../../../src/run/types.js';
import { fakeFacts } from '../../helpers/facts.js';

// A lost worker that left two engine processes: the "kill only the leftover" command names both
// pids, space separated, so it can be pasted as it is.
const engine = (pid: number): ProcessInfo => ({
  pid, ppid: 1, uid: 1000, user: 'alice', cmd: 'VLLM::EngineCore', name: 'VLLM::EngineCore', startTicks: 1000, ageMs: 95_000, pgid: 6100,
});
const run: RunView = {
  record: { id: 'r1', processes: [] } as unknown as RunRecord, status: 'degraded', live: true, pids: [6000], logsDir: '/x',
  lost: [{ name: 'agg-1', role: 'agg', how: 'exited', exitCode: 1, signal: null, at: null, noticed: false, leftPids: [6101, 6102], diagnosis: null }],
};

describe('procs.leftover: a lost worker that left two engines', () => {
  it('the kill command names both pids', async () => {
    const r = await check.run(fakeFacts({ processes: [engine(6101), engine(6102)], run }));
    expect(r.fix).toBe('end the degraded run with what it left: `dynamo-dev teardown --run r1` (or only the leftover: `kill 6101 6102`)');
  });
});
