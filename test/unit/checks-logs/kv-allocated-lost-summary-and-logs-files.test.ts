import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/kv.allocated.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { LostProcess } from '../../../src/run/losses.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';
import { routerPlan, routerRecipe, runOf } from './helpers.js';
import { type FileSpec, logSet } from './log-sets.js';

// kv.allocated's summary when a live run lost workers (how many, which, in words a user can read),
// and --logs files judged as the files they are, whatever run is live beside them.
const lost = (name: string, o: Partial<LostProcess> = {}): LostProcess => ({
  name, role: name === 'frontend' ? 'frontend' : 'agg', how: 'killed', exitCode: null, signal: 'SIGKILL', at: null, noticed: false, leftPids: [], diagnosis: null, ...o,
});
const degraded = (run: RunView, gone: LostProcess[]): RunView => ({ ...run, live: true, status: 'degraded', lost: gone });
const agg = (n: number, kvTokens: number | null): FileSpec => ({ path: `/runs/r/logs/agg-${n}.log`, process: `agg-${n}`, role: 'agg', kvTokens });
const FRONTEND: FileSpec = { path: '/runs/r/logs/frontend.log', process: 'frontend', role: 'frontend' };

describe('kv.allocated: the summary of a live run that lost workers', () => {
  it('one worker, lost: "1 of 1 worker lost", singular', async () => {
    const recipe = recipeFrom();
    const plan = buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
    const run = degraded(runOf(plan, {}, { recipe }), [lost('agg-0')]);
    const r = await check.run(fakeFacts({ run, logs: logSet('run', [FRONTEND, agg(0, 4096)]) }, { recipe, plan }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('1 of 1 worker lost or without enough KV cache: agg-0');
  });

  it('two workers lost: both named, comma separated', async () => {
    const plan = routerPlan();
    const run = degraded(runOf(plan, {}, { recipe: routerRecipe() }), [lost('agg-0'), lost('agg-1')]);
    const r = await check.run(fakeFacts({ run, logs: logSet('run', [FRONTEND, agg(0, 4096), agg(1, 4096)]) }, { plan }));
    expect(r.summary).toBe('2 of 2 workers lost or without enough KV cache: agg-0, agg-1');
  });

  it('a lost worker beside a lost frontend is still called lost', async () => {
    const plan = routerPlan();
    const run = degraded(runOf(plan, {}, { recipe: routerRecipe() }), [lost('frontend'), lost('agg-1')]);
    const r = await check.run(fakeFacts({ run, logs: logSet('run', [FRONTEND, agg(0, 4096), agg(1, 4096)]) }, { plan }));
    expect(r.summary).toBe('1 of 2 workers lost or without enough KV cache: agg-1');
  });
});

describe('kv.allocated: --logs files beside a live run', () => {
  // A --logs file named like one of the run's processes is still a file: the run's losses, states
  // and recipe are not its own.
  const plan = routerPlan();
  const live = degraded(runOf(plan, {}, { recipe: routerRecipe(), states: { 'agg-1': 'starting' } }), [lost('agg-1')]);

  it('a file without a KV line fails with the file to read, not the run\'s loss or process', async () => {
    const r = await check.run(fakeFacts({ run: live, logs: logSet('paths', [{ path: 'agg-1', kvTokens: null }]) }, { plan }));
    expect(r.status).toBe('fail');
    expect(r.details[0]).toBe('agg-1 never logged its KV cache size (no known failure signature in its log)');
    expect(r.fix).toBe('read its log: tail -n 50 agg-1');
    expect(r.summary).toBe('1 of 1 worker without enough KV cache: agg-1');
  });

  it('a file with too little KV is judged against the recipe doctor was given, not the run\'s', async () => {
    // Doctor's recipe has one worker (agg-0): the file "agg-1" is no worker of it, so there is no
    // fraction to raise; the live run's recipe has an agg-1 and would have offered one.
    const recipe = recipeFrom();
    const mine = buildPlan({ recipe, runDir: '/tmp/dd-run', gpuTotalMiB: 8188 });
    const logs = logSet('paths', [{ path: 'agg-1', kvTokens: 1000 }]);
    const r = await check.run(fakeFacts({ run: { ...live, lost: [] }, logs }, { recipe, plan: mine }));
    expect(r.status).toBe('fail');
    expect(r.fix).toBe('lower maxModelLen (--set maxModelLen=768); estimate with `dynamo-dev kv Qwen/Qwen3-0.6B --gpu-mib TOTAL --fraction F`');
  });
});
