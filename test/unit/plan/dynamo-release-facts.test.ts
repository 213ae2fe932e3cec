import { describe, expect, it } from 'vitest';
import { RELEASES, releaseFor } from '../../../src/plan/dynamo-releases.js';

// The flags and environment each Dynamo release takes, as docs/dynamo-versions.md tells users
// ("What changed between releases"); a plan for that release is built from exactly these.
const row = (since: string) => {
  const f = releaseFor(since).facts;
  expect(f.since).toBe(since);
  return [f.discovery.flag, f.discovery.env, f.routerKvEventsOff, f.disaggFlags, f.systemEnabledEnv, f.gracefulShutdownEnv, f.vllmKvEventsByDefault, f.health, f.modelReadyEndpoint, f.cachedTokens, f.kvEventDiagnostics, f.cardFilesFromWorker, f.routerPolicyFileOnly];
};

describe('what changed between Dynamo releases', () => {
  it.each([
    ['0.0.0', ['--store-kv', 'DYN_STORE_KV', '--no-kv-events', 'is-worker', true, false, true, 'worker-gated', false, false, false, false, false]],
    ['0.7.0', ['--store-kv', 'DYN_STORE_KV', '--no-kv-events', 'is-worker', false, false, true, 'worker-gated', false, false, false, false, false]],
    ['0.8.0', ['--store-kv', 'DYN_STORE_KV', '--no-kv-events', 'is-worker', false, false, true, 'always-healthy', false, false, false, false, false]],
    ['0.9.0', ['--store-kv', 'DYN_STORE_KV', '--no-kv-events', 'is-worker', false, false, true, 'always-healthy', false, false, false, false, false]],
    ['1.0.0', ['--discovery-backend', 'DYN_DISCOVERY_BACKEND', '--no-router-kv-events', 'disaggregation-mode', false, true, true, 'always-healthy', false, false, false, false, false]],
    ['1.1.0', ['--discovery-backend', 'DYN_DISCOVERY_BACKEND', '--no-router-kv-events', 'disaggregation-mode', false, true, false, 'always-healthy', false, false, false, false, false]],
    ['1.3.0', ['--discovery-backend', 'DYN_DISCOVERY_BACKEND', '--no-router-kv-events', 'disaggregation-mode', false, true, false, 'always-healthy', true, false, false, false, false]],
    ['1.4.0', ['--discovery-backend', 'DYN_DISCOVERY_BACKEND', '--no-router-kv-events', 'disaggregation-mode', false, true, false, 'always-healthy', true, false, true, true, false]],
    ['1.5.0', ['--discovery-backend', 'DYN_DISCOVERY_BACKEND', '--no-router-kv-events', 'disaggregation-mode', false, true, false, 'discovery-gated', true, true, true, true, false]],
    // From source (not run here): only the router's scoring flags change; the rest is 1.6's.
    ['1.7.0', ['--discovery-backend', 'DYN_DISCOVERY_BACKEND', '--no-router-kv-events', 'disaggregation-mode', false, true, false, 'discovery-gated', true, true, true, true, true]],
  ])('%s', (since, facts) => {
    expect(row(since)).toEqual(facts);
  });

  it('the table has exactly these entries', () => {
    expect(RELEASES.map((r) => r.since)).toEqual(['0.0.0', '0.7.0', '0.8.0', '0.9.0', '1.0.0', '1.1.0', '1.3.0', '1.4.0', '1.5.0', '1.7.0']);
  });

  it('every fact says where it was read: an upstream pull request, a file of the released wheel, or FACTS.md', () => {
    for (const r of RELEASES) {
      // From FROM_SOURCE on there is no released wheel here: an upstream file at a commit, or the release notes.
      for (const s of r.sources) expect(s, r.since).toMatch(/ai-dynamo\/dynamo#\d+|ai-dynamo \d+\.\d+\.\d+ dynamo\/\S+\.py|ai-dynamo-runtime \d+\.\d+\.\S+ .*dynamo\/_core\.abi3\.so|FACTS §\d|measured: |ai-dynamo\/dynamo \S+\.py \(commit [0-9a-f]{7,}|docs\.nvidia\.com\/dynamo\/v\d/);
    }
  });
});
