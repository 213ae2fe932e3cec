import { RELEASES, releaseFor } from './dynamo-releases.js';
import type { Plan } from './types.js';

// Before 1.4.0 the KV router logs nothing when it runs with events on while workers publish none
// (no kv_event_publisher_disabled, no kv_event_source_not_observed: dynamo-releases.ts,
// kvEventDiagnostics). Every consumer of that line (doctor's kv.events, diagnose, up's live
// warning, the bench gate) then has no evidence either way, and must say so rather than read the
// silence as "events arrive". Pure.

/** The first release whose router logs the diagnostic: "1.4.0". */
export const KV_DIAGNOSTICS_SINCE = RELEASES.find((r) => r.kvEventDiagnostics)!.since;

/** Whether the logs of this Dynamo release can show the failure; null when the release is unknown. */
export function logsKvDiagnostics(version: string | null | undefined): boolean | null {
  if (!version) return null;
  const r = releaseFor(version);
  return r.assumed ? null : r.facts.kvEventDiagnostics;
}

/** The release a run was planned for, when it was read (not assumed); null otherwise. */
export const planRelease = (plan: Pick<Plan, 'dynamo'>): string | null => (plan.dynamo && !plan.dynamo.assumed ? plan.dynamo.version : null);

/** A KV router that expects KV events (the only router that would log the diagnostic). */
export const expectsKvEvents = (plan: Pick<Plan, 'router' | 'processes'>): boolean => {
  const fe = plan.processes.find((p) => p.role === 'frontend')?.argv ?? [];
  return plan.router.mode === 'kv' && plan.router.kvEvents && !fe.includes('--no-router-kv-events') && !fe.includes('--no-kv-events');
};

/**
 * The release of a plan whose router expects KV events but whose Dynamo cannot log their absence,
 * or null (a router without events, a release that logs it, a release not read).
 */
export function kvDiagnosticsGap(plan: Pick<Plan, 'router' | 'processes' | 'dynamo'>): string | null {
  const release = planRelease(plan);
  return expectsKvEvents(plan) && logsKvDiagnostics(release) === false ? release : null;
}

/** "Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do)" */
export const kvDiagnosticsGapText = (release: string): string =>
  `Dynamo ${release} does not log kv_event_publisher_disabled (${KV_DIAGNOSTICS_SINCE} and newer do)`;

/** What to run instead of reading the logs. */
export const KV_DIAGNOSTICS_CHECK = `check routing with \`dynamo-dev probe\` (repeats that go back to their prefix's worker show the events arrive), or use Dynamo ${KV_DIAGNOSTICS_SINCE} or newer, whose router logs it`;

/** up's warning at ready, on the frontend's row: the live warning this release cannot give. */
export const kvDiagnosticsHint = (release: string): string =>
  `${kvDiagnosticsGapText(release)}: up cannot warn when workers publish no KV events; check routing with \`dynamo-dev probe\``;
