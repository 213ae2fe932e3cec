import { describe, expect, it } from 'vitest';
import type { SupervisorDeps } from '../../../src/run/supervisor-deps.js';
import { basePlan, plannedWorker, supervisorHarness } from '../../helpers/supervisor-harness.js';

// The Hugging Face lock hint while `up` starts: the second worker waits for the download lock the
// first one holds. With a python that is a wrapper staying the parent (uv run, `sh -c '. venv/bin/
// activate && python ...'`), the record names the wrapper and the lock is held by its child: that
// child is this run's as much as the wrapper is (a user told otherwise may kill their own worker).

// Both workers start at once: agg-1 waits while agg-0 downloads the model.
const plan = { ...basePlan, processes: [basePlan.processes[0], plannedWorker('agg-0', 8081, []), plannedWorker('agg-1', 8082, [])] };
const WAIT = '2026-10-07T04:58:21.118004Z  INFO filelock: Still waiting to acquire lock on /hf/.locks/x.lock (elapsed: 10.1 seconds)';

async function hint(holder: number, descendants: SupervisorDeps['descendants']): Promise<string[]> {
  const h = supervisorHarness({ plan, deps: { lockHolders: async () => [{ pid: holder, cmd: 'python3 -m dynamo.vllm --model m' }], descendants } });
  void h.sup.run();
  await h.clock.advance(0);
  expect(h.of('starting').map((e) => [e.process, e.pid])).toEqual([['frontend', 100], ['agg-0', 101], ['agg-1', 102]]);
  h.lines.get('agg-1')!(WAIT);
  await h.clock.advance(0);
  const hints = h.of('hint').filter((e) => e.code === 'hf.lock-wait').map((e) => e.text);
  void h.sup.stop('SIGINT');
  await h.clock.advance(500);
  return hints;
}

const text = (who: string) => `waiting for the Hugging Face download lock held by ${who} (python3 -m dynamo.vllm --model m); see \`dynamo-dev doctor --only hf.locks\``;

describe('who holds the lock a process of the run waits for', () => {
  it("the child of a process of this run (the real program under a wrapper) is named as this run's", async () => {
    const under = (pid: number) => (pid === 101 ? [{ pid: 5000, startTicks: 9000, cmd: 'python3 -m dynamo.vllm --model m' }] : []);
    expect(await hint(5000, under)).toEqual([text('pid 5000 (this run)')]);
  });

  it("a process that is no descendant of the run's processes is not this run's", async () => {
    const under = (pid: number) => (pid === 101 ? [{ pid: 5000, startTicks: 9000, cmd: 'x' }] : []);
    expect(await hint(5001, under)).toEqual([text('pid 5001')]);
  });

  it('when the look for descendants fails, the processes the run started still count as its own', async () => {
    const broken = () => {
      throw new Error('EACCES');
    };
    expect(await hint(101, broken)).toEqual([text('pid 101 (this run)')]);
    expect(await hint(5000, broken)).toEqual([text('pid 5000')]);
  });
});
