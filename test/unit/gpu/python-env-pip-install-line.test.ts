import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/python.env.js';
import type { PythonFacts } from '../../../src/host/types.js';
import { VERIFIED } from '../../../src/plan/dynamo-releases.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// The pip line python.env prints must install what is missing, pasted as it is: each missing
// module maps to its package, and several packages are separated by spaces.
const PY = '/home/u/venv/bin/python';
type Mod = PythonFacts['modules'][string];
const ok = (version: string): Mod => ({ ok: true, version, error: null });
const missing = (name: string): Mod => ({ ok: false, version: null, error: `ModuleNotFoundError: No module named '${name}'` });
const env = (modules: Record<string, Mod>): PythonFacts => ({
  interpreter: PY, ok: true, error: null, pythonVersion: '3.12.3', torchCuda: '12.8',
  modules: { dynamo: ok(VERIFIED), vllm: ok('0.11.0'), torch: ok('2.8.0+cu128'), ...modules },
});
const disagg = (engine: 'vllm' | 'mocker') => {
  const recipe = recipeFrom({ engine, workers: [{ role: 'prefill', gpuMemoryUtilization: 0.38 }, { role: 'decode', gpuMemoryUtilization: 0.38 }] });
  return { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) };
};

describe('python.env: the pip line', () => {
  it('vllm engine without dynamo alone: installs "ai-dynamo[vllm]"', async () => {
    const r = await check.run(fakeFacts({ python: env({ dynamo: missing('dynamo') }) }));
    expect(r.status).toBe('fail');
    expect(r.fix).toMatch(/^`\/home\/u\/venv\/bin\/python -m pip install "ai-dynamo\[vllm\]"`, or /);
  });

  it('disaggregated vllm without dynamo and nixl: both packages, space separated', async () => {
    const { recipe, plan } = disagg('vllm');
    const r = await check.run(fakeFacts({ python: env({ dynamo: missing('dynamo'), nixl: missing('nixl') }) }, { recipe, plan }));
    expect(r.fix).toMatch(/^`\/home\/u\/venv\/bin\/python -m pip install "ai-dynamo\[vllm\]" nixl`, or /);
  });
});

describe('python.env: nixl is a vLLM need only', () => {
  it('a disaggregated mocker recipe does not need nixl', async () => {
    const { recipe, plan } = disagg('mocker');
    expect(plan.disaggregated).toBe(true);
    const python: PythonFacts = {
      interpreter: PY, ok: true, error: null, pythonVersion: '3.12.3', torchCuda: null,
      modules: { dynamo: ok(VERIFIED), 'dynamo.frontend': ok(VERIFIED), 'dynamo.mocker': ok(VERIFIED) },
    };
    const r = await check.run(fakeFacts({ python }, { recipe, plan }));
    expect(r.status).toBe('pass');
    expect(r.evidence).toMatchObject({ required: ['dynamo', 'dynamo.frontend', 'dynamo.mocker'] });
  });
});
