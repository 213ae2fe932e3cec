import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/kv.allocated.js';
import { signatureFor } from '../../../src/diagnose/signatures.js';
import { formatClock } from '../../../src/format-duration.js';
import type { FileFinding } from '../../../src/diagnose/types.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { LostProcess } from '../../../src/run/losses.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';
import { routerPlan, routerRecipe, runOf } from './helpers.js';
import { type FileSpec, logSet } from './log-sets.js';

// kv.allocated as the user reads it: which worker has too little KV cache or none, why, and the
// one setting to change. The plan serves 4,096 tokens per request (maxModelLen).
const A0 = '/runs/r/logs/agg-0.log';
const A1 = '/runs/r/logs/agg-1.log';
const ESTIMATE = 'estimate with `dynamo-dev kv Qwen/Qwen3-0.6B --gpu-mib TOTAL --fraction F`';
const fileFinding = (code: string, severity: FileFinding['severity'], line: number, text: string): FileFinding => ({ code, severity, count: 1, line, text });
const workers = (a0: Partial<FileSpec>, a1: Partial<FileSpec>): FileSpec[] => [
  { path: '/runs/r/logs/frontend.log', process: 'frontend', role: 'frontend' },
  { path: A0, process: 'agg-0', role: 'agg', ...a0 },
  { path: A1, process: 'agg-1', role: 'agg', ...a1 },
];
/** The router recipe's run (two agg workers at 0.38) with these KV lines. */
function runWith(a0: Partial<FileSpec>, a1: Partial<FileSpec>, o: Parameters<typeof runOf>[2] = {}) {
  const plan = routerPlan();
  const run = runOf(plan, {}, { recipe: routerRecipe(), ...o });
  return { plan, run, logs: logSet('run', workers(a0, a1)) };
}
const lostOne = (o: Partial<LostProcess> = {}): LostProcess => ({
  name: 'agg-1', role: 'agg', how: 'killed', exitCode: null, signal: 'SIGKILL', at: '2026-11-30T10:01:00.000Z', noticed: false, leftPids: [], diagnosis: null, ...o,
});
const degraded = (run: RunView, lost: LostProcess[]): RunView => ({ ...run, live: true, status: 'degraded', lost });

describe('kv.allocated: the max model length boundary', () => {
  it('KV tokens exactly the max model length pass, with every worker and the evidence', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: 14816 });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r).toEqual({
      status: 'pass',
      summary: '2 workers with KV cache >= 4,096 tokens: agg-0 4,096, agg-1 14,816',
      details: [],
      fix: null,
      evidence: { source: 'run 20261130-101500-agg-router', maxModelLen: 4096, kvTokens: { 'agg-0': 4096, 'agg-1': 14816 }, lost: [] },
    });
  });

  it('one token short fails: the worker, both numbers, and a raise or a shorter length to fit', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: 4095 });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: '1 of 2 workers without enough KV cache: agg-1',
      details: ['agg-1: 4,095 KV tokens < max model length 4,096: one full-length request does not fit', 'KV tokens per worker: agg-0 4,096, agg-1 4,095'],
      fix: `raise its gpuMemoryUtilization (--set workers.0.gpuMemoryUtilization=0.45) or lower maxModelLen (--set maxModelLen=3840); ${ESTIMATE}`,
    });
  });

  it('a tiny KV cache still suggests a usable length (256), never 0', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 200 }, { kvTokens: 4096 });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.fix).toBe(`raise its gpuMemoryUtilization (--set workers.0.gpuMemoryUtilization=0.45) or lower maxModelLen (--set maxModelLen=256); ${ESTIMATE}`);
  });

  it("the raise is computed from the run's own recipe, not the one doctor was given", async () => {
    const own = recipeFrom({ frontend: { routerMode: 'kv', kvEvents: true } as never, workers: [{ role: 'agg', gpuMemoryUtilization: 0.3 }, { role: 'agg', gpuMemoryUtilization: 0.3 }] });
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: 1000 }, { recipe: own });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.fix).toBe(`raise its gpuMemoryUtilization (--set workers.1.gpuMemoryUtilization=0.6) or lower maxModelLen (--set maxModelLen=768); ${ESTIMATE}`);
  });

  it('workers already at the memory limit: only the shorter length is offered', async () => {
    const full = recipeFrom({ frontend: { routerMode: 'kv', kvEvents: true } as never, workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.45 }] });
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: 1000 }, { recipe: full });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.fix).toBe(`lower maxModelLen (--set maxModelLen=768); ${ESTIMATE}`);
  });

  it('one worker is counted as one', async () => {
    const recipe = recipeFrom();
    const plan = buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
    const logs = logSet('paths', [{ path: '/tmp/worker.log', kvTokens: 5000 }]);
    expect((await check.run(fakeFacts({ logs }, { recipe, plan }))).summary).toBe('1 worker with KV cache >= 4,096 tokens: /tmp/worker.log 5,000');
    const short = logSet('paths', [{ path: '/tmp/worker.log', kvTokens: 100 }]);
    const r = await check.run(fakeFacts({ logs: short }, { recipe, plan }));
    expect(r.summary).toBe('1 of 1 worker without enough KV cache: /tmp/worker.log');
    // A --logs file is no planned worker: nothing to raise.
    expect(r.fix).toBe(`lower maxModelLen (--set maxModelLen=256); ${ESTIMATE}`);
  });
});

describe('kv.allocated: a worker without a KV line', () => {
  it('the first error in its log explains it, before any warning, with the signature fix', async () => {
    const findings = [fileFinding('hf.lock-wait', 'warn', 2, 'Still waiting to acquire lock'), fileFinding('cuda.error804', 'error', 9, 'Error 804: forward compatibility')];
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: null, findings });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.details[0]).toBe(`agg-1 never logged its KV cache size: cuda.error804 at agg-1 (${A1}:9): Error 804: forward compatibility`);
    expect(r.details[1]).toBe('KV tokens per worker: agg-0 4,096, agg-1 none');
    expect(r.fix).toBe(signatureFor('cuda.error804')!.fix);
    expect(r.evidence).toMatchObject({ kvTokens: { 'agg-0': 4096, 'agg-1': null } });
  });

  it('a warning alone explains it too', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: null, findings: [fileFinding('hf.lock-wait', 'warn', 2, 'Still waiting to acquire lock')] });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.details[0]).toBe(`agg-1 never logged its KV cache size: hf.lock-wait at agg-1 (${A1}:2): Still waiting to acquire lock`);
    expect(r.fix).toBe(signatureFor('hf.lock-wait')!.fix);
  });

  it('a finding of no known signature points at diagnose for that file', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: null, findings: [fileFinding('x.unknown', 'error', 4, 'boom')] });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.fix).toBe(`dynamo-dev diagnose ${A1}`);
  });

  it('no finding: run logs point at `dynamo-dev logs`', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: null, findings: [fileFinding('x.info', 'info', 4, 'hello')] });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.details[0]).toBe('agg-1 never logged its KV cache size (no known failure signature in its log)');
    expect(r.fix).toBe('read its log: dynamo-dev logs agg-1');
  });

  it('a worker whose log was never written: says the process may never have started', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, {});
    delete logs.scan.kvTokens[A1];
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r).toMatchObject({
      status: 'fail',
      details: [`agg-1: no log at ${A1} (the process never started?)`, 'KV tokens per worker: agg-0 4,096, agg-1 none'],
      fix: 'dynamo-dev status; dynamo-dev logs agg-1',
    });
  });

  it.each(['waiting', 'starting', 'loading'])("a live run's worker still %s only warns", async (state) => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: null }, { live: true, states: { 'agg-1': state } });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: '1 of 2 workers without enough KV cache: agg-1',
      details: [`agg-1: no KV cache size logged yet (state ${state})`, 'KV tokens per worker: agg-0 4,096, agg-1 none'],
      fix: 'wait for it, or follow it with `dynamo-dev logs agg-1 --follow`',
    });
  });

  it('a worker marked ready, or a run no longer live, or a starting worker with an error: fails', async () => {
    const ready = runWith({ kvTokens: 4096 }, { kvTokens: null }, { live: true, states: { 'agg-1': 'ready' } });
    expect((await check.run(fakeFacts({ run: ready.run, logs: ready.logs }, { plan: ready.plan }))).status).toBe('fail');
    const dead = runWith({ kvTokens: 4096 }, { kvTokens: null }, { live: false, states: { 'agg-1': 'loading' } });
    expect((await check.run(fakeFacts({ run: dead.run, logs: dead.logs }, { plan: dead.plan }))).status).toBe('fail');
    const err = runWith({ kvTokens: 4096 }, { kvTokens: null, findings: [fileFinding('cuda.error804', 'error', 9, 'Error 804')] }, { live: true, states: { 'agg-1': 'loading' } });
    expect((await check.run(fakeFacts({ run: err.run, logs: err.logs }, { plan: err.plan }))).status).toBe('fail');
  });

  it('a warning and a failure: fails with the failure\'s fix', async () => {
    const { plan, run, logs } = runWith({ kvTokens: null }, { kvTokens: 1000 }, { live: true, states: { 'agg-0': 'starting' } });
    const r = await check.run(fakeFacts({ run, logs }, { plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('2 of 2 workers without enough KV cache: agg-0, agg-1');
    expect(r.fix).toBe(`raise its gpuMemoryUtilization (--set workers.0.gpuMemoryUtilization=0.45) or lower maxModelLen (--set maxModelLen=768); ${ESTIMATE}`);
  });
});

describe('kv.allocated: a live run that lost a worker', () => {
  it('names how and when it ended, what it had, the engine it left, and how to restart', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: 9152 });
    const r = await check.run(fakeFacts({ run: degraded(run, [lostOne({ leftPids: [4242, 4243] })]), logs }, { plan }));
    expect(r).toEqual({
      status: 'fail',
      summary: '1 of 2 workers lost or without enough KV cache: agg-1',
      details: [
        `agg-1 was killed by SIGKILL (at ${formatClock('2026-11-30T10:01:00.000Z')}); it had logged 9,152 KV tokens; its engine (pid 4242, 4243) still runs: the run serves without it`,
        'KV tokens per worker: agg-0 4,096, agg-1 none',
      ],
      fix: 'the run is degraded (`dynamo-dev status` says why): start agg-1 again alone with `dynamo-dev restart agg-1 --run 20261130-101500-agg-router`, or end the run with `dynamo-dev teardown --run 20261130-101500-agg-router` and start it again',
      evidence: { source: 'run 20261130-101500-agg-router', maxModelLen: 4096, kvTokens: { 'agg-0': 4096, 'agg-1': null }, lost: ['agg-1'] },
    });
  });

  it('a loss noticed later says "noticed at"; an unknown time, no KV line and no engine left say nothing', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: null });
    const noticed = await check.run(fakeFacts({ run: degraded(run, [lostOne({ how: 'exited', exitCode: 1, signal: null, noticed: true })]), logs }, { plan }));
    expect(noticed.details[0]).toBe(`agg-1 exited with code 1 (noticed at ${formatClock('2026-11-30T10:01:00.000Z')}): the run serves without it`);
    const unknown = await check.run(fakeFacts({ run: degraded(run, [lostOne({ at: null })]), logs }, { plan }));
    expect(unknown.details[0]).toBe('agg-1 was killed by SIGKILL: the run serves without it');
  });

  it('a lost frontend is no worker: the summary speaks of KV cache only', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: 1000 });
    const r = await check.run(fakeFacts({ run: degraded(run, [lostOne({ name: 'frontend', role: 'frontend' })]), logs }, { plan }));
    expect(r.summary).toBe('1 of 2 workers without enough KV cache: agg-1');
    expect(r.evidence).toMatchObject({ lost: ['frontend'] });
  });

  it('losses of a run that is not live are not counted (its logs are judged as they are)', async () => {
    const { plan, run, logs } = runWith({ kvTokens: 4096 }, { kvTokens: 9152 });
    const r = await check.run(fakeFacts({ run: { ...run, live: false, lost: [lostOne()] }, logs }, { plan }));
    expect(r.status).toBe('pass');
  });
});

describe('kv.allocated: nothing to judge', () => {
  it('no logs: a skip with the same words as the other log checks, even after a failed run', async () => {
    const r = await check.run(fakeFacts({ logs: null, noLogs: { status: 'warn', summary: 'run X failed 2 min ago; its logs are gone', fix: 'dynamo-dev up' } }));
    expect(r).toEqual({ status: 'skip', summary: 'run X failed 2 min ago; its logs are gone', details: [], fix: null, evidence: {} });
  });

  it("a mocker run's logs skip; --logs of the same files are still judged", async () => {
    const recipe = recipeFrom({ engine: 'mocker' });
    const plan = buildPlan({ recipe, runDir: '/tmp/dd-run' });
    const run = runOf(plan, {});
    const files = plan.processes.map((p) => ({ path: `/runs/r/logs/${p.name}.log`, process: p.name, role: p.role }));
    const r = await check.run(fakeFacts({ run, logs: logSet('run', files) }, { recipe, plan }));
    expect(r).toMatchObject({ status: 'skip', summary: 'mocker workers do not log a KV cache size' });
    const paths = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/worker.log', kvTokens: 5000 }]) }, { recipe, plan }));
    expect(paths.status).toBe('pass');
  });

  it('logs without a worker among them: a skip naming them', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/frontend.log' }]) }));
    expect(r).toMatchObject({ status: 'skip', summary: 'no worker logs in /tmp/frontend.log' });
  });
});
