import { describe, expect, it } from 'vitest';
import type { ExitInfo } from '../../../src/run/spawn.js';
import { KV_LINE, supervisorHarness } from '../../helpers/supervisor-harness.js';

// Seen on the real CPU engine (h32, 2026-12-07): a restart stops the old process (its grace ran out:
// SIGKILL), waits at most 300 ms for its exit to be reported, and starts the new one. Under load
// the old exit came later, and the old spawn's handler recorded it as the NEW process's end: the
// restart said 'agg-1 was killed by SIGKILL while starting again' about a process that was starting.
describe('a restart whose old process reports its exit late', () => {
  it('the late exit is the old process\'s: the new one starts, becomes ready, the restart succeeds', async () => {
    let first = true;
    let oldExit!: (e: ExitInfo) => void;
    const h = supervisorHarness({
      spawnAs: (name) => {
        if (name !== 'agg-1' || !first) return undefined;
        first = false;
        // Its exit is reported only when the test says (the harness's stop cannot see it die).
        return { pid: 555, pgid: 555, startTicks: 1555, exited: new Promise<ExitInfo>((r) => (oldExit = r)) };
      },
      deps: { appendLog: () => 0 },
    });
    void h.sup.run();
    await h.allReady();
    expect(h.sup.record.state).toBe('ready');

    const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 });
    await h.clock.advance(400);
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(2);
    const newPid = h.sup.record.processes[2].pid;
    expect(newPid).not.toBe(555);
    // Now the old process's SIGKILL exit arrives.
    oldExit({ code: null, signal: 'SIGKILL', error: null });
    await h.clock.advance(0);
    expect(h.sup.record.processes[2]).toMatchObject({ pid: newPid, state: 'starting', exitCode: null, signal: null });
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(500);
    expect(await done).toMatchObject({ event: 'done', ok: true, process: 'agg-1' });
    expect(h.sup.record.state).toBe('ready');
    expect(h.of('failed')).toEqual([]);
  });
});
