import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, SAMPLES, tempHome } from '../helpers/cli.js';

// The three log-reading checks through the built binary, with --logs (no run needed).
const LOGS = join(SAMPLES, 'logs');
const IDS = 'kv.events,kv.allocated,logs.errors';

let home: ReturnType<typeof tempHome>;
let env: Record<string, string | undefined>;
beforeEach(() => {
  home = tempHome('dd-e2e-doctor-logs-');
  env = fakeEnv(home);
});
afterEach(() => home.cleanup());

interface Doc { ok: boolean; checks: { id: string; status: string; summary: string; details: string[]; fix: string | null }[] }
const byId = (doc: Doc) => Object.fromEntries(doc.checks.map((c) => [c.id, c]));

describe('doctor log checks', () => {
  it('without a run or --logs: all three skip and say how to get logs', async () => {
    const r = await runCli(['doctor', '--only', IDS, '--recipe', 'agg-router', '--json'], env);
    const c = byId(JSON.parse(r.stdout) as Doc);
    expect(c['kv.allocated'].status).toBe('skip');
    expect(c['logs.errors'].status).toBe('skip');
    expect(c['logs.errors'].summary).toContain('--logs');
    expect(c['kv.events'].status).toBe('skip');
    expect(r.code).toBe(0);
  });

  it('--logs with the kv-events-disabled frontend log: kv.events fails quoting the line with both fixes', async () => {
    const r = await runCli(['doctor', '--only', IDS, '--recipe', 'agg-router', '--json', '--logs', join(LOGS, 'frontend-kv-events-disabled.log'), join(LOGS, 'worker-agg-ready.log')], env);
    expect(r.code).toBe(1);
    const c = byId(JSON.parse(r.stdout) as Doc);
    expect(c['kv.events'].status).toBe('fail');
    expect(c['kv.events'].details[0]).toContain('frontend-kv-events-disabled.log:3');
    expect(c['kv.events'].fix).toContain('"enable_kv_cache_events":true');
    expect(c['kv.events'].fix).toContain('--no-router-kv-events');
    expect(c['kv.allocated'].status).toBe('pass');
    expect(c['logs.errors'].status).toBe('pass');
  });

  it('--logs with only the frontend log and no --recipe: kv.events still fails, so doctor is not "ready"', async () => {
    const r = await runCli(['doctor', '--only', IDS, '--json', '--logs', join(LOGS, 'frontend-kv-events-disabled.log')], env);
    expect(r.code).toBe(1);
    const c = byId(JSON.parse(r.stdout) as Doc);
    expect(c['kv.events'].status).toBe('fail');
    expect(c['kv.events'].details[0]).toContain('frontend-kv-events-disabled.log:3');
  });

  it('--logs with a worker stuck on Error 804: kv.allocated and logs.errors fail', async () => {
    const r = await runCli(['doctor', '--only', IDS, '--json', '--logs', join(LOGS, 'worker-error804.log')], env);
    expect(r.code).toBe(1);
    const c = byId(JSON.parse(r.stdout) as Doc);
    expect(c['kv.allocated'].status).toBe('fail');
    expect(c['kv.allocated'].details[0]).toContain('cuda.error804');
    expect(c['logs.errors'].status).toBe('fail');
    expect(c['logs.errors'].details[0]).toMatch(/^cuda\.error804 x2 at .*worker-error804\.log:2/);
  });
});
