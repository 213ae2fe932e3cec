import { beforeEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/plan/types.js';
import type { Recipe } from '../../../src/recipe/schema.js';
import check from '../../../src/doctor/checks/python.env.js';
import type { PythonFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

const env = (missing: string[] = [], dynamoVersion = '1.6.1'): PythonFacts => {
  const mod = (name: string, version: string) =>
    missing.includes(name) ? { ok: false, version: null, error: `ModuleNotFoundError: No module named '${name}'` } : { ok: true, version, error: null };
  return {
    interpreter: '/home/u/venv/bin/python', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: '12.8',
    modules: { dynamo: mod('dynamo', dynamoVersion), torch: mod('torch', '2.8.0+cu128'), nixl: mod('nixl', '0.6.0'), vllm: mod('vllm', '0.11.0') },
  };
};
// Built before each test, not at module load: mutation testing counts code run at load as "static" and reruns every test for each such mutant.
let disagg: Recipe;
let disaggPlan: Plan;
beforeEach(() => {
  disagg = recipeFrom({ workers: [{ role: 'prefill', gpuMemoryUtilization: 0.38 }, { role: 'decode', gpuMemoryUtilization: 0.38 }] });
  disaggPlan = buildPlan({ recipe: disagg, runDir: '/tmp/x' });
});

describe('python.env', () => {
  it('passes with the versions', async () => {
    const r = await check.run(fakeFacts({ python: env() }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe("Python 3.12.3, dynamo 1.6.1, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8) (frontend and mocker verified; the CUDA vLLM worker is not run by dynamo-dev's tests)");
    expect(r.evidence).toMatchObject({ interpreter: '/home/u/venv/bin/python', torchCuda: '12.8', dynamo: { version: '1.6.1', support: 'verified' } });
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

  it('the mocker engine needs only ai-dynamo (its frontend and mocker), and says pip install ai-dynamo', async () => {
    const recipe = recipeFrom({ engine: 'mocker' });
    const plan = buildPlan({ recipe, runDir: '/tmp/x' });
    const mocker = (missing: string[] = []): PythonFacts => {
      const e = env(missing);
      const mod = (n: string) => (missing.includes(n) ? { ok: false, version: null, error: `ModuleNotFoundError: No module named '${n}'` } : { ok: true, version: '1.6.1', error: null });
      return { ...e, torchCuda: null, modules: { dynamo: mod('dynamo'), 'dynamo.frontend': mod('dynamo.frontend'), 'dynamo.mocker': mod('dynamo.mocker') } };
    };
    const ok = await check.run(fakeFacts({ python: mocker() }, { recipe, plan }));
    expect(ok.status).toBe('pass');
    expect(ok.summary).toBe('Python 3.12.3, dynamo 1.6.1 (verified)');
    const r = await check.run(fakeFacts({ python: mocker(['dynamo.mocker']) }, { recipe, plan }));
    expect(r.status).toBe('fail');
    expect(r.fix).toContain('/home/u/venv/bin/python -m pip install ai-dynamo`');
    expect(r.fix).not.toContain('[vllm]');
  });

  it('names the Dynamo version when it is outside the verified range: warn, or fail when no plan can serve it', async () => {
    const older = await check.run(fakeFacts({ python: env([], '1.4.2') }));
    expect(older.status).toBe('warn');
    expect(older.summary).toContain('Dynamo 1.4.2 is outside the range dynamo-dev has verified (1.6.1)');
    expect(older.fix).toContain('"ai-dynamo[vllm]==1.6.1"');
    const source = await check.run(fakeFacts({ python: env([], '1.7.0') }));
    expect(source.status).toBe('warn');
    expect(source.summary).toContain('Dynamo 1.7.0: from source, not run here');
    expect(source.evidence).toMatchObject({ dynamo: { version: '1.7.0', support: 'from-source', supported: '>=0.9.0 <1.8.0' } });
    const newer = await check.run(fakeFacts({ python: env([], '1.8.0') }));
    expect(newer.status).toBe('warn');
    expect(newer.summary).toContain('Dynamo 1.8.0 is newer than any release dynamo-dev knows: plans follow 1.7.0\'s flags (1.7.0 itself known from source only)');
    const ancient = await check.run(fakeFacts({ python: env([], '0.8.1') }));
    expect(ancient.status).toBe('fail');
    expect(ancient.summary).toContain('older than 0.9.0');
    expect((await check.run(fakeFacts({ python: env([], '1.6.1.post1') }))).status).toBe('pass');
  });

  it('fails when the interpreter cannot be run, pointing at --python', async () => {
    const r = await check.run(fakeFacts({ python: { interpreter: 'python3.12', ok: false, error: 'Python interpreter "python3.12" not found (ENOENT)', pythonVersion: null, modules: {}, torchCuda: null } }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('not found (ENOENT)');
    expect(r.fix).toContain('--python /path/to/venv/bin/python');
  });
});
