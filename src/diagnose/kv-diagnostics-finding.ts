import { KV_DIAGNOSTICS_CHECK, kvDiagnosticsGap, kvDiagnosticsGapText } from '../plan/kv-diagnostics.js';
import type { Plan } from '../plan/types.js';
import type { Finding } from './types.js';
import type { SignatureSpec } from './signature-spec.js';

// diagnose of a run whose Dynamo logs no kv_event_publisher_disabled (before 1.4.0) while its
// router expects KV events: "no finding" would read as "events arrive", which those logs cannot
// show. One info finding on the frontend's log says so (plan/kv-diagnostics.ts). Pure.

export const KV_DIAGNOSTICS_SIGNATURE: SignatureSpec = {
  code: 'dynamo.kv-diagnostics-unlogged',
  severity: 'info',
  // Stryker disable next-line ArrayDeclaration: not a log signature: no line is ever searched for it
  needles: [],
  patterns: [],
  title: 'This Dynamo cannot log missing KV events',
  explanation:
    'The run\'s KV router expects KV events, but routers before Dynamo 1.4.0 log nothing when workers publish none ' +
    '(no kv_event_publisher_disabled): they route by load, and the logs read the same whether events arrive or not.',
  fix: KV_DIAGNOSTICS_CHECK,
};

/** The finding for a run's frontend log, or null (a router without events, a release that logs it, the frontend's log not read). */
export function kvDiagnosticsFinding(plan: Plan, frontendLog: string | null): Finding | null {
  const release = kvDiagnosticsGap(plan);
  if (!release || !frontendLog) return null;
  const s = KV_DIAGNOSTICS_SIGNATURE;
  return {
    code: s.code, severity: s.severity, count: 1, file: frontendLog, line: 0,
    text: `${kvDiagnosticsGapText(release)}; the run's router expects KV events`,
    explanation: s.explanation, fix: s.fix,
  };
}
