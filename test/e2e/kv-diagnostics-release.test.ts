import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { records, upHarness } from '../helpers/up-run.js';

// Before Dynamo 1.4.0 the KV router logs no kv_event_publisher_disabled (dynamo-releases.ts,
// kvEventDiagnostics): up's live warning, doctor's kv.events (on a run and on --logs) and diagnose
// cannot see that failure there, and say so instead of reading the silence as "events arrive".
// The fakes play the release (FAKE_DYNAMO_VERSION: the fake frontend logs the line from 1.4.0 only,
// as the real ones do; test/dynamo/release-matrix.test.ts runs the real 1.3.1).

const up = upHarness('dd-kvdiag-');
afterEach(() => up.cleanup());

interface Check { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: Record<string, unknown> }
interface Diagnosis { findings: { code: string; severity: string; file: string; text: string; fix: string }[] }

const HINT = '! frontend: Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do): up cannot warn when workers publish no KV events; check routing with `dynamo-dev probe`';

describe('a release whose router cannot log missing KV events (1.3.1) and the first that can (1.4.0)', () => {
  it('1.3.1: up says at ready that it cannot warn; kv.events warns (run and --logs) instead of passing; diagnose adds an info finding; prefix caching off still fails from the command line', async () => {
    const s = await up.setup({ FAKE_DYNAMO_VERSION: '1.3.1' });
    const u = await runCli(['up', 'mocker', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(u.code, u.stderr).toBe(0);
    expect(u.stderr.split('\n')).toContain(HINT);
    const rec = records(s.stateDir)[0];
    expect(rec.plan.dynamo).toMatchObject({ version: '1.3.1', assumed: false });

    const d = await runCli(['doctor', '--only', 'kv.events', '--json'], s.env);
    const kv = (JSON.parse(d.stdout) as { checks: Check[] }).checks[0];
    expect(kv.status).toBe('warn');
    expect(kv.summary).toBe(`Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do): run ${rec.id} cannot show whether the KV router gets KV events (the command lines of its 2 workers enable them)`);
    expect(kv.fix).toMatch(/^check routing with `dynamo-dev probe`/);
    expect(kv.evidence).toMatchObject({ release: '1.3.1', diagnosticsLogged: false });
    // A warning, not a failure: nothing was seen to be wrong.
    expect(d.code).toBe(0);

    // The same frontend log given with --logs, judged with the Dynamo installed now (1.3.1).
    const frontendLog = rec.processes.find((p) => p.name === 'frontend')!.log;
    const l = await runCli(['doctor', '--only', 'kv.events', '--recipe', 'mocker', '--logs', frontendLog, '--json'], s.env);
    const kvLogs = (JSON.parse(l.stdout) as { checks: Check[] }).checks[0];
    expect(kvLogs.status).toBe('warn');
    expect(kvLogs.summary).toMatch(/^Dynamo 1\.3\.1 does not log kv_event_publisher_disabled \(1\.4\.0 and newer do\): \S*frontend\.log cannot show/);

    const g = await runCli(['diagnose', '--json'], s.env);
    expect(g.code).toBe(0);
    const info = (JSON.parse(g.stdout) as Diagnosis).findings.filter((f) => f.code === 'dynamo.kv-diagnostics-unlogged');
    expect(info).toEqual([expect.objectContaining({
      severity: 'info', file: frontendLog,
      text: 'Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do); the run\'s router expects KV events',
    })]);
    const text = await runCli(['diagnose'], s.env);
    expect(text.stdout).toContain('i dynamo.kv-diagnostics-unlogged  This Dynamo cannot log missing KV events  (once)');
    expect(text.stdout).not.toContain('No known failure signature found.');
    expect((await runCli(['teardown'], s.env)).code).toBe(0);

    // Prefix caching off: the command lines show it on any release.
    const off = await runCli(['up', 'mocker', '--detach', '--no-preflight', ...s.sets, '--set', 'workers.0.args=["--no-enable-prefix-caching"]'], s.env, { timeoutMs: 25_000 });
    expect(off.code, off.stderr).toBe(0);
    const kvOff = (JSON.parse((await runCli(['doctor', '--only', 'kv.events', '--json'], s.env)).stdout) as { checks: Check[] }).checks[0];
    expect(kvOff.status).toBe('fail');
    expect(kvOff.details).toContain('agg-0: --no-enable-prefix-caching in its command line: the mocker publishes no KV events');
  });

  it('1.4.0: no such hint, kv.events passes on the router\'s silence, diagnose finds nothing', async () => {
    const s = await up.setup({ FAKE_DYNAMO_VERSION: '1.4.0' });
    const u = await runCli(['up', 'mocker', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(u.code, u.stderr).toBe(0);
    expect(u.stderr).not.toContain('does not log kv_event_publisher_disabled');
    const kv = (JSON.parse((await runCli(['doctor', '--only', 'kv.events', '--json'], s.env)).stdout) as { checks: Check[] }).checks[0];
    expect(kv.status).toBe('pass');
    expect(kv.evidence).toMatchObject({ release: '1.4.0', diagnosticsLogged: true });
    const g = JSON.parse((await runCli(['diagnose', '--json'], s.env)).stdout) as Diagnosis;
    expect(g.findings.map((f) => f.code)).not.toContain('dynamo.kv-diagnostics-unlogged');
  });
});
