import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/kv.allocated.js';
import { fakeFacts } from '../../helpers/facts.js';
import { pathLogs, routerPlan, routerRecipe, runLogs, runOf, sample } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dd-kvalloc-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('kv.allocated', () => {
  it('skips without logs', async () => {
    expect((await check.run(fakeFacts({ logs: null }))).status).toBe('skip');
  });

  it('passes when every worker logged a KV size >= max model length; evidence: tokens per worker', async () => {
    const plan = routerPlan();
    const run = runOf(plan, { frontend: sample('frontend-kv-events-disabled.log'), 'agg-0': sample('worker-agg-ready.log'), 'agg-1': sample('worker-combined-kv-line.log') });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { plan }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('agg-0 14,816');
    expect(r.summary).toContain('agg-1 9,152');
    expect(r.evidence).toMatchObject({ maxModelLen: 4096, kvTokens: { 'agg-0': 14816, 'agg-1': 9152 } });
  });

  it('fails naming the worker that never logged its KV size, and why (lock wait)', async () => {
    const plan = routerPlan();
    const run = runOf(plan, { 'agg-0': sample('worker-agg-ready.log'), 'agg-1': sample('worker-lock-wait.log') });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('agg-1');
    expect(r.summary).not.toContain('agg-0');
    expect(r.details[0]).toMatch(/^agg-1 never logged its KV cache size: hf\.lock-wait at agg-1 \(.*worker-lock-wait\.log:2\): .*Still waiting to acquire lock/);
    expect(r.fix).toContain('hf download');
  });

  it('explains a missing KV line with Error 804 and with free memory', async () => {
    const plan = routerPlan();
    const run = runOf(plan, { 'agg-0': sample('worker-error804.log'), 'agg-1': sample('worker-free-memory.log') });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { plan }));
    expect(r.status).toBe('fail');
    expect(r.details[0]).toContain('cuda.error804');
    expect(r.details[1]).toContain('vllm.free-memory');
  });

  it('fails a live run that lost a worker, naming it, though its KV line is in its log', async () => {
    const plan = routerPlan();
    const base = runOf(plan, { 'agg-0': sample('worker-agg-ready.log'), 'agg-1': sample('worker-combined-kv-line.log') }, { live: true });
    const run = {
      ...base,
      status: 'degraded' as const,
      lost: [{ name: 'agg-1', role: 'agg' as const, how: 'killed' as const, exitCode: null, signal: 'SIGKILL', at: '2026-11-30T10:01:00.000Z', noticed: false, leftPids: [4242], diagnosis: null }],
    };
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('1 of 2 workers lost or without enough KV cache: agg-1');
    expect(r.details[0]).toMatch(/^agg-1 was killed by SIGKILL \(at \d\d:\d\d:\d\d\); it had logged 9,152 KV tokens; its engine \(pid 4242\) still runs: the run serves without it$/);
    expect(r.fix).toContain(`dynamo-dev teardown --run ${run.record.id}`);
    // The same logs of a run that lost nothing pass.
    expect((await check.run(fakeFacts({ run: base, logs: await runLogs(base) }, { plan }))).status).toBe('pass');
  });

  it('fails when a worker holds fewer tokens than the max model length', async () => {
    const plan = routerPlan();
    const small = join(dir, 'agg-1.log');
    writeFileSync(small, '(EngineCore pid=1) INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 2,048 tokens\n');
    const run = runOf(plan, { 'agg-0': sample('worker-agg-ready.log'), 'agg-1': small }, { recipe: routerRecipe() });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { plan }));
    expect(r.status).toBe('fail');
    expect(r.details[0]).toBe('agg-1: 2,048 KV tokens < max model length 4,096: one full-length request does not fit');
    // agg-1 is the second replica of workers.0 (2 x 0.38 of limit 0.9): it can go up to 0.45 each.
    expect(r.fix).toBe('raise its gpuMemoryUtilization (--set workers.0.gpuMemoryUtilization=0.45) or lower maxModelLen (--set maxModelLen=2048); estimate with `dynamo-dev kv Qwen/Qwen3-0.6B --gpu-mib TOTAL --fraction F`');
  });

  it('warns (not fails) while a live run\'s worker is still starting', async () => {
    const plan = routerPlan();
    const starting = join(dir, 'agg-1.log');
    writeFileSync(starting, 'INFO 10-07 05:12:09 [model.py:547] Resolved architecture: Qwen3ForCausalLM\n');
    const run = runOf(plan, { 'agg-0': sample('worker-agg-ready.log'), 'agg-1': starting }, { live: true, states: { 'agg-1': 'loading' } });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { plan }));
    expect(r.status).toBe('warn');
    expect(r.details[0]).toContain('agg-1: no KV cache size logged yet (state loading)');
  });

  it('with --logs judges the files that look like worker logs', async () => {
    copyFileSync(sample('worker-agg-ready.log'), join(dir, 'worker-a.log'));
    copyFileSync(sample('worker-lock-wait.log'), join(dir, 'worker-b.log'));
    copyFileSync(sample('frontend-kv-events-disabled.log'), join(dir, 'frontend.log'));
    const logs = await pathLogs([dir]);
    const r = await check.run(fakeFacts({ logs }));
    expect(r.status).toBe('fail');
    expect(Object.keys(r.evidence.kvTokens as object).sort()).toEqual([join(dir, 'worker-a.log'), join(dir, 'worker-b.log')]);
    expect(r.details[0]).toContain('worker-b.log never logged its KV cache size: hf.lock-wait');
  });

  it('with --logs, a worker log without a KV line and no known signature points at the file, not at `dynamo-dev logs`', async () => {
    writeFileSync(join(dir, 'worker.log'), 'INFO 10-07 05:12:09 [model.py:547] Resolved architecture: Qwen3ForCausalLM\n');
    const r = await check.run(fakeFacts({ logs: await pathLogs([join(dir, 'worker.log')]) }));
    expect(r.status).toBe('fail');
    expect(r.details[0]).toContain('worker.log never logged its KV cache size');
    expect(r.fix).toBe(`read its log: tail -n 50 ${join(dir, 'worker.log')}`);
  });
});
