import { afterEach, describe, expect, inject, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { bindable } from '../helpers/ports.js';
import { EMBEDDED_MODEL } from '../../src/plan/embedded-model.js';
import { cleanup, cli, expectCleanDiagnose, json, portBlock, portSets, realHome, survivors, upDetached } from './helpers.js';

// The release matrix (test/dynamo/venv.mjs MATRIX): the core cases (up mocker, a completion, probe,
// kv.events, teardown) on the oldest release the table supports for them, in its own cached venv.
// The verified release (1.6.1) runs the same cases in up-mocker.test.ts and kv-router.test.ts; here
// only what the older release does differently is asserted differently, from the release table:
// no cached_tokens before 1.5 (probe judges by worker identity), no kv_event_publisher_disabled
// before 1.4 (kv.events cannot pass on logs that could not show the failure), and the frontend
// reading the embedded model from the package's Hugging Face cache before 1.4.

afterEach(cleanup);

const PROBE = ['--prefixes', '16', '--repeats', '4', '--prefix-tokens', '400', '--json'];

interface ProbeDoc {
  hitRate: number | null;
  workers: string[];
  verdict: { code: string; summary: string; details: string[]; next: string | null };
}
interface Check { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: Record<string, any> }

describe.each(inject('olderReleases'))('the core cases on Dynamo $release (real frontend, real mockers)', ({ release, python }) => {
  it('up mocker serves the embedded model with no Hugging Face cache of the user\'s; a completion; probe by worker identity; kv.events says the logs cannot show it; teardown leaves nothing', async () => {
    // An empty cache of the user's, offline: the model can come from the package alone.
    const home = realHome({ HF_HUB_CACHE: join(tmpHub(), 'hub') });
    const base = await portBlock(12);
    const up = await upDetached(['mocker', '--python', python, ...portSets(base)], home);
    expect(up.code, up.stdout + up.stderr).toBe(0);
    expect(up.stdout).toMatch(/✓ ready in [\d.]+ s {2}run \S+-mocker/);
    // python.env names the release (supported, not the verified one). Asked of doctor itself: up's
    // preflight is skipped where other sessions' engine processes share the machine (upDetached).
    const env = await cli(['doctor', '--only', 'python.env', '--python', python], home);
    expect(env.stdout, env.stdout + env.stderr).toMatch(new RegExp(`^! Python environment +Python [\\d.]+, dynamo ${release.replaceAll('.', '\\.')} in .*outside the range dynamo-dev has verified`, 'm'));
    // up's live warning (kv_event_publisher_disabled) cannot come from this release: it says so at ready.
    expect(up.stderr).toContain(`! frontend: Dynamo ${release} does not log kv_event_publisher_disabled (1.4.0 and newer do): up cannot warn when workers publish no KV events`);

    const url = `http://127.0.0.1:${base}`;
    const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual([EMBEDDED_MODEL]);
    // /v1/models/<model>/ready exists from 1.3.0 (dynamo-releases.ts).
    const ready = (await (await fetch(`${url}/v1/models/${encodeURIComponent(EMBEDDED_MODEL)}/ready`)).json()) as Record<string, any>;
    expect(ready).toMatchObject({ model: EMBEDDED_MODEL, ready: true, namespaces: { dynamo: { worker_types: { aggregated: { workers: 2 } } } } });
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: EMBEDDED_MODEL, messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 4 }),
    });
    expect(res.status).toBe(200);
    const completion = (await res.json()) as { choices: { finish_reason: string }[]; usage: { completion_tokens: number; prompt_tokens_details?: unknown } };
    expect(completion.choices[0].finish_reason).toBe('length');
    expect(completion.usage.completion_tokens).toBe(4);

    // No cached_tokens before 1.5: routing judged by worker identity, the hit rate unknown and why.
    const pr = await cli(['probe', ...PROBE], home, 120_000);
    const doc = json<ProbeDoc>(pr);
    expect(doc.workers).toHaveLength(2);
    expect(doc.hitRate).toBeNull();
    expect(doc.verdict.code, doc.verdict.summary).toBe('works');
    expect(doc.verdict.summary).toMatch(/went back to their prefix's worker \(cache hits unknown: no cached_tokens\)$/);
    expect(doc.verdict.details.join('\n')).toContain(`Dynamo ${release}'s frontend does not report cached_tokens`);
    expect(pr.code).toBe(0);

    // The router of this release logs no kv_event_publisher_disabled: no pass from its silence.
    const kr = await cli(['doctor', '--only', 'kv.events', '--json', '--python', python], home);
    const kv = json<{ checks: Check[] }>(kr).checks[0];
    expect(kv.status).toBe('warn');
    expect(kv.summary).toMatch(new RegExp(`^Dynamo ${release.replace(/\./g, '\\.')} does not log kv_event_publisher_disabled \\(1\\.4\\.0 and newer do\\)`));
    expect(kv.fix).toContain('dynamo-dev probe');
    expect(kv.evidence).toMatchObject({ diagnosticsLogged: false, release });

    const td = await cli(['teardown', '--json'], home);
    expect(td.code, td.stderr).toBe(0);
    expect(json<{ remaining: unknown[] }>(td).remaining).toEqual([]);
    expect(survivors(home.stateDir)).toEqual([]);
    expect(await Promise.all([base, base + 1, base + 2].map(bindable))).toEqual([true, true, true]);
    // Healthy logs: nothing above info (the info that these logs cannot show missing KV events).
    expect(await expectCleanDiagnose(home)).toBe(3);
  });
});

let hubs = 0;
/** An empty folder for a Hugging Face cache (under the test's temp dir, removed with the home). */
function tmpHub(): string {
  const dir = join(inject('hubCache'), '..', '..', `empty-${process.pid}-${hubs++}`);
  mkdirSync(join(dir, 'hub'), { recursive: true });
  return dir;
}
