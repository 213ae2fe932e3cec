import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/logs.errors.js';
import { fakeFacts } from '../../helpers/facts.js';
import { pathLogs, routerPlan, runLogs, runOf, sample } from './helpers.js';

describe('logs.errors', () => {
  it('skips without logs, saying how to get some', async () => {
    const r = await check.run(fakeFacts({ logs: null }));
    expect(r.status).toBe('skip');
    expect(r.summary).toContain('dynamo-dev up');
    expect(r.summary).toContain('--logs');
  });

  it('skips (never passes) when there is no log file to read: an empty --logs folder, a run whose logs are gone', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'dd-empty-logs-'));
    try {
      const r = await check.run(fakeFacts({ logs: await pathLogs([empty]) }));
      expect(r.status).toBe('skip');
      expect(r.summary).toContain(`no log files in ${empty}`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const run = runOf(routerPlan(), {});
    const gone = await check.run(fakeFacts({ run, logs: await runLogs(run) }));
    expect(gone.status).toBe('skip');
    expect(gone.summary).toContain('no log file of run');
  });

  it('passes on healthy logs and mentions warnings', async () => {
    const logs = await pathLogs([sample('worker-agg-ready.log'), sample('worker-lock-wait.log')]);
    const r = await check.run(fakeFacts({ logs }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('hf.lock-wait');
  });

  it('fails listing each error finding with count, first place and text, and the first one\'s fix', async () => {
    const logs = await pathLogs([sample('worker-error804.log'), sample('worker-free-memory.log'), sample('worker-agg-ready.log')]);
    const r = await check.run(fakeFacts({ logs }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('cuda.error804, vllm.free-memory');
    expect(r.details[0]).toMatch(/^cuda\.error804 x2 at .*worker-error804\.log:2: .*Error 804/);
    expect(r.details[1]).toMatch(/^vllm\.free-memory x1 at .*worker-free-memory\.log:1: /);
    expect(r.fix).toContain('LD_LIBRARY_PATH');
  });

  it('names the process for run logs', async () => {
    const plan = routerPlan();
    const run = runOf(plan, { frontend: sample('frontend-kv-events-disabled.log'), 'agg-0': sample('worker-agg-ready.log'), 'agg-1': sample('worker-ucx-no-am.log') });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { plan }));
    expect(r.status).toBe('fail');
    expect(r.details[0]).toContain('agg-1 (');
    expect(r.details[0]).toContain('worker-ucx-no-am.log:2');
  });
});
