import { describe, expect, it } from 'vitest';
import { KV_LINE, supervisorHarness } from '../../helpers/supervisor-harness.js';
import type { SupervisorResult } from '../../../src/run/supervisor.js';

// up --restart on-failure:N in the supervisor: a worker that dies after ready is started again (the
// restart machinery), at most N times; then a foreground run fails as without the flag, saying why;
// a death before ready is up's failure, never restarted.

const marks: string[] = [];
const harness = (o: Parameters<typeof supervisorHarness>[0] = {}) => supervisorHarness({
  restart: { mode: 'on-failure', max: 1 }, ...o,
  deps: { appendLog: (_path: string, line: string) => (marks.push(line), 0), ...o.deps },
});

describe('up --restart on-failure:1, in the foreground', () => {
  it('a worker exiting 1 after ready is started again and the run is ready; exiting again past the limit fails the run saying so', async () => {
    const h = harness();
    let result: SupervisorResult | null = null;
    void h.sup.run().then((r) => (result = r));
    await h.allReady();
    await h.clock.advance(100);
    expect(h.sup.record.state).toBe('ready');
    expect(h.sup.record.restartPolicy).toEqual({ mode: 'on-failure', max: 1 });

    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(0);
    expect(h.sup.record.state).toBe('degraded');
    await h.clock.advance(400);
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(2);
    expect(marks.at(-1)).toMatch(/^--- dynamo-dev restart \S+: agg-1 exited with code 1; started again by --restart on-failure:1 \(restart 1\) ---$/);
    h.lines.get('agg-1')!(KV_LINE);
    await h.clock.advance(300);
    expect(result).toBeNull();
    expect(h.sup.record.state).toBe('ready');
    const agg1 = h.sup.record.processes[2];
    expect(agg1).toMatchObject({ state: 'ready', restarts: 1, pid: 103, restartsEnded: null });
    expect(agg1.restartHistory).toEqual([expect.objectContaining({ by: 'on-failure', cause: 'exited with code 1', exitCode: 1, signal: null, outcome: 'ready' })]);
    expect(h.of('exited')).toEqual([expect.objectContaining({ process: 'agg-1', code: 1, afterReady: true, restart: 'on-failure:1' })]);
    expect(h.of('hint').filter((e) => e.code === 'restart.on-failure').map((e) => e.text)).toEqual([
      // The first restart of a crash waits 100 ms (the back-off), said first.
      'ended 300 ms after its start: started again after 100 ms (back-off doubles from 100 ms up to 1 min, reset once it stays up 10 s)',
      'ready again (restart 1, --restart on-failure:1); run ready',
    ]);
    expect(h.of('failed')).toEqual([]);

    h.machine.remove(103);
    h.exits.get('agg-1')!({ code: null, signal: 'SIGKILL', error: null });
    await h.clock.advance(2000);
    const reason = 'agg-1 was killed by SIGKILL after the run was ready; not restarted: restart limit reached: restarted 1 time already (--restart on-failure:1)';
    expect(h.of('failed')[0]?.reason).toBe(reason);
    expect(result).toMatchObject({ outcome: 'failed', code: 1 });
    expect(h.sup.record.processes[2].restartsEnded?.reason).toBe('restart limit reached: restarted 1 time already (--restart on-failure:1)');
  });

  it('a worker that dies before the run was ever ready: up fails, nothing restarted', async () => {
    const h = harness();
    let result: SupervisorResult | null = null;
    void h.sup.run().then((r) => (result = r));
    await h.clock.advance(0);
    h.machine.remove(101);
    h.exits.get('agg-0')!({ code: 1, signal: null, error: null });
    await h.clock.advance(2000);
    expect(result).toMatchObject({ outcome: 'failed', code: 1 });
    expect(h.calls.filter((c) => c === 'spawn agg-0')).toHaveLength(1);
    expect(h.sup.record.processes[1].restartHistory).toBeUndefined();
  });

  it('a worker that exits 0 after ready is not restarted (no failure), and the failure says so', async () => {
    const h = harness();
    void h.sup.run();
    await h.allReady();
    await h.clock.advance(100);
    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 0, signal: null, error: null });
    await h.clock.advance(2000);
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(1);
    expect(h.of('failed')[0]?.reason).toMatch(/; not restarted: it exited with code 0, not a failure \(--restart on-failure:1 restarts failures only\)$/);
  });

  it('a restart that does not come back (it dies while starting again) is not tried again: the foreground run fails saying so', async () => {
    const h = harness({ restart: { mode: 'on-failure', max: null } });
    let result: SupervisorResult | null = null;
    void h.sup.run().then((r) => (result = r));
    await h.allReady();
    await h.clock.advance(100);
    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(400);
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(2);
    h.machine.remove(103);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(2000);
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(2);
    expect(result).toMatchObject({ outcome: 'failed', code: 1, reason: 'agg-1 exited with code 1 after the run was ready; its restart did not come back: agg-1 exited with code 1 while starting again' });
    const agg1 = h.sup.record.processes[2];
    expect(agg1.restartHistory).toEqual([expect.objectContaining({ by: 'on-failure', outcome: 'failed', reason: 'agg-1 exited with code 1 while starting again' })]);
    expect(agg1.restartsEnded?.reason).toBe('its restart did not come back: agg-1 exited with code 1 while starting again');
  });
});

describe('up --restart on-failure, detached and watching', () => {
  it('a restart that does not come back leaves the run degraded, the others serving, and says why', async () => {
    const h = harness({ restart: { mode: 'on-failure', max: null }, detach: true, watch: true });
    let result: SupervisorResult | null = null;
    void h.sup.run().then((r) => (result = r));
    await h.allReady();
    await h.clock.advance(100);
    h.machine.remove(102);
    h.exits.get('agg-1')!({ code: null, signal: 'SIGKILL', error: null });
    await h.clock.advance(400);
    h.machine.remove(103);
    h.exits.get('agg-1')!({ code: 1, signal: null, error: null });
    await h.clock.advance(2000);
    expect(result).toBeNull();
    expect(h.sup.record.state).toBe('degraded');
    expect(h.states()).toEqual({ frontend: 'ready', 'agg-0': 'ready', 'agg-1': 'failed' });
    expect(h.calls.filter((c) => c === 'spawn agg-1')).toHaveLength(2);
    expect(h.sup.record.processes[2].restartsEnded?.reason).toBe('its restart did not come back: agg-1 exited with code 1 while starting again');
    expect(h.of('hint').filter((e) => e.code === 'restart.on-failure').map((e) => e.text)).toEqual([
      'ended 300 ms after its start: started again after 100 ms (back-off doubles from 100 ms up to 1 min, reset once it stays up 10 s)',
      'did not come back (agg-1 exited with code 1 while starting again); not restarted again; the run is degraded',
    ]);
    void h.sup.stop('SIGTERM');
    await h.clock.advance(2000);
  });
});
