import { describe, expect, it } from 'vitest';
import type { RestartEvent } from '../../../src/run/restart-request.js';
import { formatRestartStep } from '../../../src/ui/restart-report.js';
import { KV_LINE, supervisorHarness } from '../../helpers/supervisor-harness.js';

// `dynamo-dev restart agg-1` of a worker that had already died (seen by hand after kill -9 of the
// whole group): the command printed "agg-1 is not running; starting it again" and then
// "agg-1 (pid N): already gone", the same fact twice. The second line is left out; a part of its
// group still alive (an engine core) is still reported as stopped.
async function restartAfterDeath(leaveEngine: boolean) {
  // agg-1 is the harness's pid 102; its engine core (pid 900, its group) is recorded while it lives.
  const engine = { pid: 900, startTicks: 2900, cmd: 'VLLM::EngineCore' };
  const h = supervisorHarness({ detach: true, watch: true, deps: { descendants: (pid) => (leaveEngine && pid === 102 ? [engine] : []) } });
  if (leaveEngine) h.machine.add({ ...engine, ppid: 102, pgid: 102 });
  void h.sup.run();
  await h.allReady();
  const agg1 = h.sup.record.processes[2];
  expect(agg1.pid).toBe(102);
  h.machine.remove(agg1.pid!);
  h.exits.get('agg-1')!({ code: null, signal: 'SIGKILL', error: null });
  await h.clock.advance(0);
  const steps: RestartEvent[] = [];
  const done = h.sup.restart('agg-1', { graceMs: 1000, readyTimeoutMs: 0 }, (e) => void steps.push(e));
  await h.clock.advance(400);
  h.lines.get('agg-1')!(KV_LINE);
  await h.clock.advance(500);
  const d = await done;
  expect(d, JSON.stringify(d)).toMatchObject({ event: 'done', ok: true, process: 'agg-1' });
  if (leaveEngine) expect(h.machine.alive(900)).toBe(false);
  return steps.map((e) => formatRestartStep(e)).filter((l) => l !== null).map((l) => l!.trim());
}

describe('restart of a process that had ended', () => {
  it('says once that it is not running: no "already gone" line for its pid', async () => {
    const lines = await restartAfterDeath(false);
    expect(lines[0]).toBe('agg-1 is not running; starting it again');
    expect(lines.filter((l) => /already gone/.test(l))).toEqual([]);
    expect(lines.filter((l) => /^stopped /.test(l))).toEqual([]);
    expect(lines.some((l) => /^started agg-1 \(pid \d+\)/.test(l))).toBe(true);
  });

  it('what is left of its group is still stopped, and said', async () => {
    const lines = await restartAfterDeath(true);
    expect(lines[0]).toBe('agg-1 is not running; starting it again');
    expect(lines.filter((l) => /^stopped agg-1 \(pid \d+\) with SIG/.test(l))).toHaveLength(1);
  });
});
