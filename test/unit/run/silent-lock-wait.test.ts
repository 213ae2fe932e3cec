import { describe, expect, it } from 'vitest';
import { supervisorHarness } from '../../helpers/supervisor-harness.js';

// The silent download-lock wait (run/lock-waits.ts probe, process-lifecycle.ts findSilentLockWait
// and lockHint), until now reached only by the e2e tests (up-lock-hint): the real worker waits on a
// Hugging Face lock without a word (huggingface_hub logs it under a WARNING-level logger), so a
// worker silent for lockSilentMs while a lock of the model is held outside its own tree is waiting
// on it: its row says whose lock, once, and run.json keeps it for bench's hf.no-lock-wait gate.

const LOCK = '/home/u/.cache/huggingface/hub/.locks/models--m/abc.lock';
/** The harness's run, its model's lock held by `holder`; the clock moved past startup. */
async function silentRun(holder: number, ms: number) {
  const h = supervisorHarness({ deps: { heldModelLocks: async () => [{ path: LOCK, holders: [{ pid: holder, cmd: 'python3 download.py' }] }] } });
  void h.sup.run();
  await h.clock.advance(0);
  await h.clock.advance(ms);
  return h;
}
const lockHints = (h: Awaited<ReturnType<typeof silentRun>>) => h.of('hint').filter((e) => e.code === 'hf.lock-wait');

describe('a worker silent while a lock of its model is held', () => {
  it('by another process: after 2 s, one hint naming the holder, the worker loading, the wait in run.json', async () => {
    const h = await silentRun(4242, 1500);
    expect(lockHints(h)).toEqual([]);
    await h.clock.advance(1500);
    await h.clock.advance(3000);
    expect(lockHints(h)).toEqual([{
      event: 'hint', process: 'agg-0', code: 'hf.lock-wait',
      text: 'waiting for the Hugging Face download lock held by pid 4242 (python3 download.py); see `dynamo-dev doctor --only hf.locks`',
    }]);
    expect(h.states()['agg-0']).toBe('loading');
    expect(h.sup.record.processes[1].lockWait).toMatchObject({ lockPath: LOCK, holderPid: 4242, holderCmd: 'python3 download.py' });
  });

  it('by the worker itself (its own download at work): no hint, no wait recorded', async () => {
    // The harness's agg-0 is pid 101; its lockHolders names pid 4242 (python3 download.py) for any lock.
    const h = await silentRun(101, 6000);
    expect(lockHints(h)).toEqual([]);
    expect(h.sup.record.processes[1].lockWait ?? null).toBeNull();
    expect(h.states()['agg-0']).toBe('starting');
  });
});
