import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/python.env.js';
import type { PythonFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

const env = (missing: string[] = []): PythonFacts => {
  const mod = (name: string, version: string) =>
    missing.includes(name) ? { ok: false, version: null, error: `ModuleNotFoundError: No module named '${name}'` } : { ok: true, version, error: null };
  return {
    interpreter: '/home/u/venv/bin/python', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: '12.8',
    modules: { dynamo: mod('dynamo', '1.0.0'), torch: mod('torch', '2.8.0+cu128'), nixl: mod('nixl', '0.6.0'), vllm: mod('vllm', '0.11.0') },
  };
};
const disagg = recipeFrom({ workers: [{ role: 'prefill', gpuMemoryUtilization: 0.38 }, { role: 'decode', gpuMemoryUtilization: 0.38 }] });
const disaggPlan = buildPlan({ recipe: disagg, runDir: '/tmp/x' });

describe('python.env', () => {
  it('passes with the versions', async () => {
    const r = await check.run(fakeFacts({ python: env() }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('Python 3.12.3, dynamo 1.0.0, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8)');
    expect(r.evidence).toMatchObject({ interpreter: '/home/u/venv/bin/python', torchCuda: '12.8' });
  });

  it('fails naming the missing module, with the pip command and the --python hint', async () => {
    const r = await check.run(fakeFacts({ python: env(['vllm']) }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain("cannot import vllm (needed by the vllm engine): vllm (ModuleNotFoundError: No module named 'vllm')");
    expect(r.fix).toContain('/home/u/venv/bin/python -m pip install "ai-dynamo[vllm]"');
    expect(r.fix).toContain('--python');
    expect(r.details).toContain("vllm: missing (ModuleNotFoundError: No module named 'vllm')");
  });

  it('needs nixl only for disaggregated recipes', async () => {
    expect((await check.run(fakeFacts({ python: env(['nixl']) }))).status).toBe('pass');
    const r = await check.run(fakeFacts({ python: env(['nixl']) }, { recipe: disagg, plan: disaggPlan }));
    expect(r.status).toBe('fail');
    expect(r.fix).toContain('pip install nixl');
  });

  it('the mocker engine needs only dynamo', async () => {
    const recipe = recipeFrom({ engine: 'mocker' });
    const plan = buildPlan({ recipe, runDir: '/tmp/x' });
    expect((await check.run(fakeFacts({ python: env(['vllm', 'torch', 'nixl']) }, { recipe, plan }))).status).toBe('pass');
    expect((await check.run(fakeFacts({ python: env(['dynamo']) }, { recipe, plan }))).status).toBe('fail');
  });

  it('fails when the interpreter cannot be run, pointing at --python', async () => {
    const r = await check.run(fakeFacts({ python: { interpreter: 'python3.12', ok: false, error: 'Python interpreter "python3.12" not found (ENOENT)', pythonVersion: null, modules: {}, torchCuda: null } }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('not found (ENOENT)');
    expect(r.fix).toContain('--python /path/to/venv/bin/python');
  });
});
