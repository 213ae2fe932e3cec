import { describe, expect, it } from 'vitest';
import check, { MOCKER_KV_EVENTS_FIX } from '../../../src/doctor/checks/kv.events.js';
import { buildPlan } from '../../../src/plan/build.js';
import { recipeFrom } from '../../helpers/facts.js';
import { fakeFacts } from './facts-with-release.js';
import { finding, logSet } from './log-sets.js';

// The mocker has no --kv-events-config; it stops publishing only when prefix caching is off. A fix
// telling a mocker user to add the vLLM flag would send them after a flag the mocker rejects.
const mockerRouter = (args: string[][]) => {
  const recipe = recipeFrom({
    engine: 'mocker',
    frontend: { routerMode: 'kv', kvEvents: true } as never,
    workers: args.map((a) => ({ role: 'agg', args: a })) as never,
  });
  return { recipe, plan: buildPlan({ recipe, runDir: '/tmp/dd-run' }) };
};
const disabled = finding('dynamo.kv-events-disabled', '/tmp/fe.log', 3, 'WARN kv_event_publisher_disabled: KV-event publishing is disabled');

describe('kv.events on a mocker KV router', () => {
  it('workers with prefix caching off: fails naming them, and the fix is the mocker\'s (no vLLM flag)', async () => {
    const { recipe, plan } = mockerRouter([['--no-enable-prefix-caching'], []]);
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }], [disabled]) }, { recipe, plan }));
    expect(r.status).toBe('fail');
    expect(r.fix).toBe(MOCKER_KV_EVENTS_FIX);
    expect(r.fix).not.toContain('--kv-events-config');
    expect(r.details).toContain('agg-0: --no-enable-prefix-caching in its command line: the mocker publishes no KV events');
    expect(r.details!.join('\n')).not.toContain('agg-1');
  });

  it('before any log: the plan alone fails a mocker worker with prefix caching off', async () => {
    const { recipe, plan } = mockerRouter([[], ['--no-enable-prefix-caching']]);
    const r = await check.run(fakeFacts({ logs: null }, { recipe, plan }));
    expect(r).toMatchObject({ status: 'fail', summary: 'agg-1 would publish no KV events to the KV router', fix: MOCKER_KV_EVENTS_FIX });
  });

  it('mocker workers with prefix caching on and a quiet router: pass', async () => {
    const { recipe, plan } = mockerRouter([[], []]);
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/fe.log' }]) }, { recipe, plan }));
    expect(r.status).toBe('pass');
  });
});
