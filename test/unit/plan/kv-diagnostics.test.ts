import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../../src/plan/build.js';
import { KV_DIAGNOSTICS_SINCE, kvDiagnosticsGap, kvDiagnosticsHint, logsKvDiagnostics } from '../../../src/plan/kv-diagnostics.js';
import { kvDiagnosticsFinding } from '../../../src/diagnose/kv-diagnostics-finding.js';
import { signatureFor } from '../../../src/diagnose/signatures.js';
import { recipeFrom } from '../../helpers/facts.js';

const plan = (version: string | null, frontend: Record<string, unknown> = { routerMode: 'kv', kvEvents: true }) =>
  buildPlan({ recipe: recipeFrom({ frontend: frontend as never, workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 } as never] }), runDir: '/tmp/r', gpuTotalMiB: 8188, dynamoVersion: version });

describe('which releases log kv_event_publisher_disabled (from the release table)', () => {
  it('1.4.0 is the first; before it none; unknown or unreadable versions are unknown', () => {
    expect(KV_DIAGNOSTICS_SINCE).toBe('1.4.0');
    expect(['1.3.1', '1.3.0.post1', '1.0.0', '1.4.0rc1'].map(logsKvDiagnostics)).toEqual([false, false, false, false]);
    expect(['1.4.0', '1.4.2', '1.6.1'].map(logsKvDiagnostics)).toEqual([true, true, true]);
    expect([null, undefined, '', 'garbage'].map(logsKvDiagnostics)).toEqual([null, null, null, null]);
  });

  it('the gap: a KV router with events on a release before 1.4.0; not 1.4.0, not an approximate or round-robin router, not an assumed version', () => {
    expect(kvDiagnosticsGap(plan('1.3.1'))).toBe('1.3.1');
    expect(kvDiagnosticsGap(plan('1.4.0'))).toBeNull();
    expect(kvDiagnosticsGap(plan('1.3.1', { routerMode: 'kv', kvEvents: false }))).toBeNull();
    expect(kvDiagnosticsGap(plan('1.3.1', { routerMode: 'round-robin', kvEvents: true }))).toBeNull();
    expect(kvDiagnosticsGap(plan(null))).toBeNull();
    const approxByArgs = plan('1.3.1', { routerMode: 'kv', kvEvents: true, args: ['--no-router-kv-events'] });
    expect(kvDiagnosticsGap(approxByArgs)).toBeNull();
    expect(kvDiagnosticsHint('1.3.1')).toBe('Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do): up cannot warn when workers publish no KV events; check routing with `dynamo-dev probe`');
  });

  it('diagnose\'s info finding: on the frontend\'s log of a 1.3.1 run only, with its title and the probe fix', () => {
    const f = kvDiagnosticsFinding(plan('1.3.1'), '/runs/x/logs/frontend.log');
    expect(f).toMatchObject({ code: 'dynamo.kv-diagnostics-unlogged', severity: 'info', count: 1, file: '/runs/x/logs/frontend.log', line: 0 });
    expect(f!.text).toBe('Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do); the run\'s router expects KV events');
    expect(f!.fix).toContain('dynamo-dev probe');
    expect(signatureFor(f!.code)!.title).toBe('This Dynamo cannot log missing KV events');
    expect(kvDiagnosticsFinding(plan('1.4.0'), '/runs/x/logs/frontend.log')).toBeNull();
    expect(kvDiagnosticsFinding(plan('1.3.1'), null)).toBeNull();
  });
});
