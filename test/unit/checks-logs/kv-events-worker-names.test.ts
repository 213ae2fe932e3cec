import { describe, expect, it } from 'vitest';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import check from '../../../src/doctor/checks/kv.events.js';
import { scanText } from '../../../src/diagnose/scanner.js';
import { fakeFacts } from './facts-with-release.js';
import { pathLogs, routerPlan, routerRecipe, runLogs, runOf, sample } from './helpers.js';

// kv.events names the workers the router complains about by our process names: the 1.6.1 frontend
// says `worker_id=N`, and a worker's own log may announce its N (real lines, /tmp/dyn-probe runs of
// ai-dynamo 1.6.1: a KV-router frontend and two mockers with --no-enable-prefix-caching).
const FRONTEND = sample('frontend-1.6.1-two-mockers-no-kv-events.log');
const M0 = sample('mocker-1.6.1-no-prefix-caching-0.log');
const M1 = sample('mocker-1.6.1-no-prefix-caching-1.log');
const ID0 = '8827815698234301387';
const ID1 = '9719479771209540493';

describe('kv.events names the router\'s worker_id by process', () => {
  it('the scanner keeps each id the router names and each id a mocker announces as its own', async () => {
    const logs = await pathLogs([FRONTEND, M0, M1]);
    const f = logs.scan.byFile![FRONTEND].find((x) => x.code === 'dynamo.kv-events-disabled')!;
    expect(f.count).toBe(2);
    expect(f.workerIds).toEqual([ID0, ID1]);
    expect(logs.scan.workerIds).toEqual({ [M0]: [ID0], [M1]: [ID1] });
    // The frontend's own lines that mention worker ids (routing, adding workers) announce nothing.
    expect(logs.scan.workerIds![FRONTEND]).toBeUndefined();
  });

  it('a run: the summary and details say agg-0 and agg-1, with the ids as evidence', async () => {
    const plan = routerPlan();
    const run = runOf(plan, { frontend: FRONTEND, 'agg-0': M0, 'agg-1': M1 });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toMatch(/kv_event_publisher_disabled for agg-0, agg-1: no KV events from them/);
    expect(r.summary).not.toContain('worker_id');
    expect(r.details).toContain(`the router names agg-0 (worker_id=${ID0}), agg-1 (worker_id=${ID1})`);
    expect((r.evidence.diagnostics as { workers: unknown[] }[])[0].workers).toEqual([
      { workerId: ID0, process: 'agg-0' }, { workerId: ID1, process: 'agg-1' },
    ]);
  });

  it('in the run\'s process order, whatever order the router logged them in', async () => {
    const plan = routerPlan();
    const run = runOf(plan, { frontend: FRONTEND, 'agg-0': M1, 'agg-1': M0 });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    expect(r.details).toContain(`the router names agg-0 (worker_id=${ID1}), agg-1 (worker_id=${ID0})`);
  });

  it('an id no worker log announced stays an id, said to be unknown: never a guess', async () => {
    const plan = routerPlan();
    // agg-1's log is not the one that announced ID1 (a vLLM worker without forward-pass metrics never does).
    const run = runOf(plan, { frontend: FRONTEND, 'agg-0': M0, 'agg-1': sample('worker-agg-ready.log') });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    expect(r.summary).toMatch(new RegExp(`for agg-0, worker_id=${ID1}:`));
    expect(r.details).toContain(`the router names agg-0 (worker_id=${ID0}), worker_id=${ID1} (unknown process)`);
  });

  it('two logs announcing the same id: unknown, not the first of them', async () => {
    const plan = routerPlan();
    const dir = mkdtempSync(join(tmpdir(), 'dd-kv-ids-'));
    const copy = join(dir, 'agg-1.log');
    copyFileSync(M0, copy);
    const run = runOf(plan, { frontend: FRONTEND, 'agg-0': M0, 'agg-1': copy });
    const r = await check.run(fakeFacts({ run, logs: await runLogs(run) }, { recipe: routerRecipe(), plan }));
    rmSync(dir, { recursive: true });
    expect(r.details.join('\n')).toContain(`worker_id=${ID0} (unknown process)`);
    expect(r.details.join('\n')).not.toMatch(/agg-\d \(worker_id=/);
  });

  it('the vLLM forward-pass-metrics line and the JSON-lines diagnostic carry ids too', () => {
    const vllm = scanText('w.log', `(EngineCore_DP0 pid=812) INFO 12-01 06:02:24 [instrumented_scheduler.py:2151] InstrumentedScheduler: ZMQ PUB bound on tcp://*:20380 (worker_id=${ID1}, dp_rank=0)\n`);
    expect(vllm.workerIds).toEqual({ 'w.log': [ID1] });
    expect(vllm.findings).toEqual([]);
    const json = scanText('f.jsonl', '{"time":"2026-10-07T05:12:20.704420Z","level":"WARN","target":"dynamo_llm::kv_router::indexer::recovery::source_health","message":"KV-event publishing is disabled for a role that requires KV events","diagnostic_code":"kv_event_publisher_disabled","worker_id":7587888512394541}\n');
    expect(json.byFile!['f.jsonl'][0].workerIds).toEqual(['7587888512394541']);
  });
});
