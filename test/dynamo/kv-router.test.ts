import { afterEach, describe, expect, it } from 'vitest';
import { stripAnsi } from '../../src/diagnose/line.js';
import { cleanup, cli, expectCleanDiagnose, json, logOf, portBlock, portSets, python, realHome, until } from './helpers.js';

// The built-in mocker recipe is a KV router with events in front of two mockers, which publish
// their simulated KV events themselves (prefix caching on, 64-token blocks). Both probe verdicts
// and the kv.events check, on the real router and its real diagnostics.

afterEach(cleanup);

/**
 * Small enough to run in seconds on the mocker's simulated timing, and several blocks per prefix.
 * 16 prefixes: the real router picks at random between idle workers, so 8 cold prefixes all went
 * to one of the two workers once in 128 runs (CI, 2026-12-02); 16 do so once in 32,768.
 */
const PROBE = ['--prefixes', '16', '--repeats', '4', '--prefix-tokens', '400', '--json'];

interface ProbeDoc {
  settings: { blockSize: number | null };
  hitRate: number;
  workers: string[];
  verdict: { code: string; summary: string; next: string | null };
}

describe('KV router with two real mocker workers', () => {
  it('publishing real KV events: probe says prefix routing works, judged in 64-token blocks', async () => {
    const home = realHome();
    const base = await portBlock(12);
    const up = await cli(['up', 'mocker', '--detach', '--no-preflight', '--python', python(), ...portSets(base)], home);
    expect(up.code, up.stdout + up.stderr).toBe(0);
    const r = await cli(['probe', ...PROBE], home, 120_000);
    const doc = json<ProbeDoc>(r);
    expect(doc.settings.blockSize).toBe(64);
    expect(doc.workers).toHaveLength(2);
    expect(doc.verdict.code, doc.verdict.summary).toBe('works');
    expect(doc.hitRate).toBeGreaterThanOrEqual(0.8);
    expect(r.code).toBe(0);
    const kv = json<{ checks: { status: string }[] }>(await cli(['doctor', '--only', 'kv.events', '--json', '--python', python()], home));
    expect(kv.checks[0].status).toBe('pass');
    expect((await cli(['teardown'], home)).code).toBe(0);
    expect(await expectCleanDiagnose(home)).toBe(3);
  });

  it('KV events off on the workers (prefix caching disabled) while the router expects them: the real warning, kv.events fails quoting it, probe at random level', async () => {
    const home = realHome();
    const base = await portBlock(12);
    const up = await cli(['up', 'mocker', '--detach', '--no-preflight', '--python', python(), ...portSets(base),
      '--set', 'workers.0.args=["--no-enable-prefix-caching"]'], home);
    expect(up.code, up.stdout + up.stderr).toBe(0);
    // The real frontend logs it once per worker, at once (FACTS §4).
    const line = await until('kv_event_publisher_disabled in the frontend log',
      () => stripAnsi(logOf(home, 'frontend')).split('\n').find((l) => l.includes('diagnostic_code="kv_event_publisher_disabled"')), 15_000);
    expect(line).toMatch(/ WARN dynamo_llm::kv_router::indexer::recovery::source_health: KV-event publishing is disabled for a role that requires KV events /);

    const dr = await cli(['doctor', '--only', 'kv.events', '--json', '--python', python()], home);
    expect(dr.code).toBe(1);
    const kv = json<{ checks: { status: string; summary: string; details: string[] }[] }>(dr).checks[0];
    expect(kv.status).toBe('fail');
    expect(kv.summary).toMatch(/kv_event_publisher_disabled/);
    // The quote is the real line, from the run's frontend log.
    expect(kv.details[0]).toMatch(/frontend\.log:\d+\) \(x2\): .*KV-event publishing is disabled for a role that requires KV events diagnostic_code="kv_event_publisher_disabled"/);

    const pr = await cli(['probe', ...PROBE], home, 120_000);
    const doc = json<ProbeDoc>(pr);
    // Workers that cache nothing: not one hit, even on a worker that had served the prefix, which
    // is below any router's level, and the verdict says so rather than "at random level".
    expect(doc.hitRate).toBe(0);
    expect(doc.verdict.code, doc.verdict.summary).toBe('random-level');
    expect(doc.verdict.summary).toMatch(/^no repeat hit the cache, not even the \d+ on a worker that had served their prefix, and repeats spread over workers like random routing: the workers cache no prefixes/);
    expect(doc.verdict.next).toBe('dynamo-dev doctor --only kv.events');
    expect(pr.code).toBe(1);
  });
});
