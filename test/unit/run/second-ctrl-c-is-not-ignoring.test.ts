import { describe, expect, it } from 'vitest';
import { startStop, stopTargets } from '../../../src/run/stop.js';
import { formatStopped } from '../../../src/ui/up-report.js';
import { FakeMachine } from '../../helpers/fake-machine.js';

// A process SIGKILLed at the user's second Ctrl-C was still shutting down: the report must not say
// it ignored SIGTERM (the real Dynamo frontend takes ~0.3 s to leave; a quick second Ctrl-C kills
// it first). Only a SIGKILL at the end of the grace says the process ignored SIGTERM.

const target = { name: 'frontend', pid: 100, pgid: 100, startTicks: 500 };
const slowLeaver = { pid: 100, ppid: 11, pgid: 100, startTicks: 500, cmd: 'python3 -m dynamo.frontend', termExitMs: 2000 };

describe('SIGKILL asked for (second Ctrl-C) vs SIGKILL at the grace deadline', () => {
  it('escalated before the grace ran out: the result says forced, and the stop line says the second Ctrl-C killed it', async () => {
    const m = new FakeMachine([slowLeaver]);
    const h = startStop([target], { graceMs: 10_000 }, m.deps());
    await Promise.resolve();
    m.t = 300;
    h.escalate('SIGINT');
    const r = await h.done;
    expect(r.stopped[0]).toMatchObject({ name: 'frontend', signal: 'SIGKILL', forced: true, forcedBy: 'SIGINT' });
    const text = formatStopped({ event: 'stopped', runId: 'r1', reason: 'user', stopped: r.stopped, remaining: [] }, { reason: 'user', logs: { frontend: '/s/frontend.log' } }, { rowsShown: true });
    expect(text).toContain('! frontend was killed by the second Ctrl-C (SIGKILL) after');
    expect(text).not.toContain('ignored SIGTERM');
  });

  it('killed at the grace deadline: not forced, and the stop line says it ignored SIGTERM', async () => {
    const m = new FakeMachine([{ ...slowLeaver, termExitMs: null }]);
    const r = await stopTargets([target], { graceMs: 500 }, m.deps());
    expect(r.stopped[0]).toMatchObject({ name: 'frontend', signal: 'SIGKILL' });
    expect(r.stopped[0].forced).toBeUndefined();
    const text = formatStopped({ event: 'stopped', runId: 'r1', reason: 'user', stopped: r.stopped, remaining: [] }, { reason: 'user', logs: {} }, { rowsShown: true });
    expect(text).toContain('! frontend ignored SIGTERM and was killed with SIGKILL after');
  });

  it('a second Ctrl-C after the grace already ran out changes nothing: not forced', async () => {
    const m = new FakeMachine([{ ...slowLeaver, termExitMs: null }]);
    const h = startStop([target], { graceMs: 200 }, m.deps());
    m.onScan = (mm) => { if (mm.t >= 400) h.escalate(); };
    const r = await h.done;
    expect(r.stopped[0].signal).toBe('SIGKILL');
    expect(r.stopped[0].forced).toBeUndefined();
  });

  // The second signal is not always a Ctrl-C: `dynamo-dev teardown` from another terminal sends the
  // stopping supervisor SIGTERM, a closing terminal SIGHUP. The report says which, never a Ctrl-C
  // nobody pressed.
  const killedBy = async (by: NodeJS.Signals | undefined) => {
    const m = new FakeMachine([slowLeaver]);
    const h = startStop([target], { graceMs: 10_000 }, m.deps());
    await Promise.resolve();
    m.t = 300;
    h.escalate(by);
    const r = await h.done;
    const text = formatStopped({ event: 'stopped', runId: 'r1', reason: 'user', stopped: r.stopped, remaining: [] }, { reason: 'user', logs: {} }, { rowsShown: true });
    return { result: r.stopped[0], text };
  };

  it('a SIGTERM while stopping (teardown from another terminal): forced, by SIGTERM, and the line says so', async () => {
    const { result, text } = await killedBy('SIGTERM');
    expect(result).toMatchObject({ signal: 'SIGKILL', forced: true, forcedBy: 'SIGTERM' });
    expect(text).toMatch(/! frontend was killed with SIGKILL after [\d.]+ m?s at a second stop request, a SIGTERM from dynamo-dev teardown or a kill/);
    expect(text).not.toContain('Ctrl-C');
  });

  it('a SIGHUP while stopping says the terminal closed; an escalation of unknown origin says a request, not a Ctrl-C', async () => {
    expect((await killedBy('SIGHUP')).text).toContain('at the terminal closing, SIGHUP');
    const unknown = await killedBy(undefined);
    expect(unknown.result.forcedBy).toBeUndefined();
    expect(unknown.text).toContain('at a second stop request');
    expect(unknown.text).not.toContain('Ctrl-C');
  });
});
