import { fakeFacts as baseFacts, type FactValues } from '../../helpers/facts.js';

// The log checks' facts with a Dynamo installed whose router logs kv_event_publisher_disabled
// (1.6.1): the shared default (1.0.0) is a release that does not, where kv.events cannot pass on a
// quiet log (test/unit/checks-logs/kv-events-release.test.ts covers that side).

/** Python facts with ai-dynamo at `version`. */
export const pythonWith = (version: string): FactValues['python'] => ({
  interpreter: 'python3', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: null,
  modules: { dynamo: { ok: true, version, error: null } },
});

export const fakeFacts: typeof baseFacts = (values = {}, o = {}) => baseFacts({ python: pythonWith('1.6.1'), ...values }, o);
