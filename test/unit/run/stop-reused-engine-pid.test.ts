import { describe, expect, it } from 'vitest';
import { stopTargets } from '../../../src/run/stop.js';
import { FakeMachine } from '../../helpers/fake-machine.js';

// A recorded engine dies during the stop and a new child of the run gets its pid: the stop follows
// the new process (found as the run's descendant, so ours) even after its parent exits and it is
// no longer anyone's descendant. Before, the stop kept the dead engine's start time for that pid,
// lost the new child once it was adopted by init, and called the target done with it alive.

describe('a recorded engine pid reused by a new child of the run while it stops', () => {
  it('the new child is followed after its parent exits: SIGKILLed at the grace, nothing left', async () => {
    const m = new FakeMachine([
      { pid: 100, ppid: 11, pgid: 100, startTicks: 500, cmd: 'python3 -m dynamo.vllm', termExitMs: null },
      { pid: 101, ppid: 100, pgid: 101, startTicks: 510, cmd: 'VLLM::EngineCore', termExitMs: null },
    ]);
    let reused = false;
    m.onScan = (mm) => {
      if (mm.t >= 100 && !reused) {
        reused = true;
        // The engine exits; the worker forks a helper into its own session that gets pid 101.
        mm.remove(101);
        mm.add({ pid: 101, ppid: 100, pgid: 101, startTicks: 900, cmd: 'helper', termExitMs: null });
      }
      if (mm.t >= 200 && mm.alive(100)) {
        // The worker exits on its own; init adopts the helper.
        mm.remove(100);
        mm.remove(101);
        mm.add({ pid: 101, ppid: 1, pgid: 101, startTicks: 900, cmd: 'helper', termExitMs: null });
      }
    };
    const target = { name: 'agg-0', pid: 100, pgid: 100, startTicks: 500, descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] };
    const r = await stopTargets([target], { graceMs: 1000 }, m.deps());
    expect(m.alive(101)).toBe(false);
    expect(m.signalsTo(101).map((s) => s.sig)).toContain('SIGKILL');
    expect(r.stopped[0]).toMatchObject({ name: 'agg-0', signal: 'SIGKILL' });
  });
});
