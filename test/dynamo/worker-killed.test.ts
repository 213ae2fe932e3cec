import { afterEach, describe, expect, it } from 'vitest';
import { isSameProcess } from '../../src/run/proc.js';
import { cleanup, cli, json, portBlock, portSets, python, realHome, records, until } from './helpers.js';
import { EMBEDDED_MODEL } from '../../src/plan/embedded-model.js';

// The lie this tool exists to prevent, on the released Dynamo: one real mocker worker of a detached
// run dies by SIGKILL (the OOM killer's signal) after ready. The real frontend keeps counting it
// until its file-discovery registration expires (about 10 s with 1.6.1), so nothing but our own
// record of the run can say at once that it is no longer ready.

afterEach(cleanup);

// The mocker recipe's own model (models/hub in the package, src/plan/embedded-model.ts), served with no Hugging Face cache.
const MODEL = EMBEDDED_MODEL;

interface Lost { name: string; how: string; signal: string | null; at: string | null }
interface StatusDoc { runs: { id: string; state: string; lost: Lost[]; processes: { name: string; alive: boolean; ready: boolean }[] }[] }
interface DoctorDoc { ok: boolean; checks: { id: string; status: string; summary: string }[] }

describe('SIGKILL of one real mocker worker of a detached run', () => {
  it('status says degraded and names the worker at once, and stays so; doctor --only frontend.models fails naming it; teardown stops the rest', async () => {
    const home = realHome();
    const base = await portBlock();
    const up = await cli(['up', 'mocker', '--detach', '--no-preflight', '--python', python(), ...portSets(base)], home);
    expect(up.code, up.stdout + up.stderr).toBe(0);
    expect(json<StatusDoc>(await cli(['status', '--json'], home)).runs[0].state).toBe('ready');

    const agg1 = records(home.stateDir)[0].processes.find((p) => p.name === 'agg-1')!;
    expect(agg1.pid).not.toBeNull();
    process.kill(agg1.pid!, 'SIGKILL');
    await until('agg-1 to be gone', () => (isSameProcess(agg1.pid!, agg1.startTicks) ? undefined : true), 10_000);

    // Right away: the real frontend still reports 2 workers ready (registration not yet expired).
    const url = `http://127.0.0.1:${base}/v1/models/${encodeURIComponent(MODEL)}/ready`;
    const st = json<StatusDoc>(await cli(['status', '--json'], home)).runs[0];
    expect(st.state).toBe('degraded');
    expect(st.lost.map((l) => l.name)).toEqual(['agg-1']);
    expect(typeof st.lost[0].at).toBe('string');
    // A supervisor that watches the run records the signal; without one the exit is unknown. Never "exited".
    expect(st.lost[0].how === 'killed' ? st.lost[0].signal : st.lost[0].how).toMatch(/^(SIGKILL|gone)$/);
    expect(st.processes.map((p) => [p.name, p.alive, p.ready])).toEqual([['frontend', true, true], ['agg-0', true, true], ['agg-1', false, false]]);

    const human = await cli(['status'], home);
    const first = human.stdout.split('\n')[0];
    expect(first).toContain('degraded: agg-1');
    expect(first).not.toMatch(/\bready\b/);

    // frontend.models must not pass on the frontend's stale count while a planned worker is gone.
    const dr = await cli(['doctor', '--only', 'frontend.models', '--json', '--python', python()], home);
    const fm = json<DoctorDoc>(dr).checks[0];
    expect(fm.status, fm.summary).toBe('fail');
    expect(fm.summary).toContain('agg-1');
    expect(dr.code).toBe(1);

    // Once the real frontend drops the registration it counts one worker; the run stays degraded.
    await until('the frontend to count 1 worker', async () => {
      const body = (await (await fetch(url)).json()) as { namespaces?: { dynamo?: { worker_types?: { aggregated?: { workers?: number } } } } };
      return body.namespaces?.dynamo?.worker_types?.aggregated?.workers === 1 ? true : undefined;
    }, 30_000);
    expect(json<StatusDoc>(await cli(['status', '--json'], home)).runs[0].state).toBe('degraded');

    const td = await cli(['teardown', '--json'], home);
    expect(td.code, td.stderr).toBe(0);
    const doc = json<{ stopped: { name: string; signal: string | null }[]; remaining: unknown[] }>(td);
    expect(doc.remaining).toEqual([]);
    // The two healthy processes and the run's background supervisor (up --detach leaves one) stop
    // on SIGTERM; nothing needed SIGKILL.
    expect(doc.stopped.filter((s) => s.signal !== null).map((s) => `${s.name} ${s.signal}`).sort()).toEqual(['agg-0 SIGTERM', 'frontend SIGTERM', 'supervisor SIGTERM']);
  });
});
