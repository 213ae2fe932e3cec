import { describe, expect, it } from 'vitest';
import { flagValue } from '../../../src/plan/argv.js';
import { buildPlan, planPorts } from '../../../src/plan/build.js';
import { modelInPath } from '../../../src/plan/model-ready.js';
import { validateRecipe } from '../../../src/recipe/load.js';

// Recipe options that change the plan and are not in a built-in recipe: parallel start, CUDA
// graphs, a worker's own flags and environment, block sizes.
const RUN = '/state/runs/r1';
const recipe = (workers: unknown[], extra: Record<string, unknown> = {}) => validateRecipe({ name: 't', workers, ...extra }, 't');
const plan = (workers: unknown[], extra: Record<string, unknown> = {}) => buildPlan({ recipe: recipe(workers, extra), runDir: RUN });

describe('start order and engine flags', () => {
  it('startup: parallel starts every worker at once', () => {
    const p = plan([{ role: 'agg', replicas: 3, gpuMemoryUtilization: 0.2 }], { startup: 'parallel' });
    expect(p.processes.map((x) => x.waitFor)).toEqual([[], [], [], []]);
  });

  it('enforceEager: false leaves CUDA graphs on (no --enforce-eager) and plans their larger overhead', () => {
    const p = plan([{ role: 'agg', gpuMemoryUtilization: 0.3 }], { enforceEager: false });
    expect(p.processes[1].argv).not.toContain('--enforce-eager');
    expect(p.memory?.overheadMiB).toBe(700);
  });

  it('a worker\'s own args come after the planned flags, and its env over the planned env', () => {
    const p = plan([{ role: 'agg', gpuMemoryUtilization: 0.3, args: ['--max-num-seqs', '8'], env: { CUDA_VISIBLE_DEVICES: '1', X: 'y' } }]);
    expect(p.processes[1].argv.slice(-2)).toEqual(['--max-num-seqs', '8']);
    expect(p.processes[1].env).toMatchObject({ CUDA_VISIBLE_DEVICES: '1', X: 'y', DYN_SYSTEM_PORT: '8081' });
  });

  it('frontend args and env reach the frontend only', () => {
    const p = plan([{ role: 'agg', gpuMemoryUtilization: 0.3 }], { frontend: { args: ['--kv-cache-block-size', '32'], env: { RUST_LOG: 'debug' } } });
    expect(p.processes[0].argv.slice(-2)).toEqual(['--kv-cache-block-size', '32']);
    expect(p.processes[0].env.RUST_LOG).toBe('debug');
    expect(p.processes[1].env.RUST_LOG).toBeUndefined();
  });

  it('the block size a worker passes, as --block-size N or --block-size=N; 0 or junk keeps the default', () => {
    const sizes = (args: string[]) => plan([{ role: 'agg', gpuMemoryUtilization: 0.3, args }]).processes[1].blockSize;
    expect(sizes(['--block-size', '32'])).toBe(32);
    expect(sizes(['--block-size=8'])).toBe(8);
    expect(sizes(['--block-size', '0'])).toBe(16);
    expect(sizes(['--block-size', 'x'])).toBe(16);
    expect(sizes(['--block-size', '2.5'])).toBe(16);
  });

  it('a round-robin router never gets the KV-event flags', () => {
    const p = plan([{ role: 'agg', gpuMemoryUtilization: 0.3 }], { frontend: { routerMode: 'round-robin', kvEvents: false } });
    expect(p.processes[0].argv).not.toContain('--no-router-kv-events');
    expect(p.router).toEqual({ mode: 'round-robin', kvEvents: false });
  });

  it('the GPU index and the model budget', () => {
    const p = buildPlan({ recipe: recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.33 }], { gpu: 1 }), runDir: RUN, gpuTotalMiB: 10_000 });
    expect(p.gpu).toEqual({ index: 1, totalMiB: 10_000 });
    expect(p.processes[1].env.CUDA_VISIBLE_DEVICES).toBe('1');
    expect(p.budget).toEqual({ fractionSum: 0.66, limit: 0.9, budgetMiB: 6600 });
    expect(p.memory).toEqual({ bytesPerToken: null, weightsMiB: null, overheadMiB: 400 });
  });

  it('weights of 0 MiB are no estimate', () => {
    const p = buildPlan({ recipe: recipe([{ role: 'agg', gpuMemoryUtilization: 0.3 }]), runDir: RUN, gpuTotalMiB: 8000, model: { bytesPerToken: 114_688, weightsMiB: 0 } });
    expect(p.processes[1].kvTokensEstimate).toBeNull();
    expect(p.memory).toEqual({ bytesPerToken: 114_688, weightsMiB: null, overheadMiB: 400 });
  });
});

describe('small helpers', () => {
  it('flagValue: the last one wins; a flag at the very end has no value', () => {
    expect(flagValue(['--a', '1', '--a=2'], '--a')).toBe('2');
    expect(flagValue(['--a=2', '--a', '3'], '--a')).toBe('3');
    expect(flagValue(['--a'], '--a')).toBeNull();
    expect(flagValue(['--ab', '1'], '--a')).toBeNull();
  });

  it('modelInPath: local folders are not', () => {
    expect(modelInPath('Qwen/Qwen3-0.6B')).toBe(true);
    expect(modelInPath('/models/x')).toBe(false);
  });

  it('planPorts names every port by process', () => {
    expect(planPorts(plan([{ role: 'agg', gpuMemoryUtilization: 0.3 }]))).toEqual([
      { name: 'frontend.http', port: 8000, process: 'frontend' }, { name: 'agg-0.system', port: 8081, process: 'agg-0' },
    ]);
  });
});
