import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/python.env.js';
import { FROM_SOURCE, NEWEST_KNOWN, SUPPORTED_BELOW, SUPPORTED_MIN, VERIFIED } from '../../../src/plan/dynamo-releases.js';
import type { PythonFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// python.env as the user reads it: which interpreter, which module is missing and why, and the
// exact pip line for this engine.
const PY = '/home/u/venv/bin/python';
const HINT = "pass `--python /path/to/venv/bin/python` (or set DYNAMO_DEV_PYTHON, or the recipe's `python:`) to use the environment that has Dynamo";
const RANGE = `dynamo-dev plans for Dynamo ${SUPPORTED_MIN} up to ${SUPPORTED_BELOW} (exclusive) and its real-Dynamo tests run ${VERIFIED}`;
type Mod = PythonFacts['modules'][string];
const ok = (version: string | null): Mod => ({ ok: true, version, error: null });
const missing = (name: string): Mod => ({ ok: false, version: null, error: `ModuleNotFoundError: No module named '${name}'` });

function vllmEnv(modules: Record<string, Mod> = {}, o: Partial<PythonFacts> = {}): PythonFacts {
  return {
    interpreter: PY, ok: true, error: null, pythonVersion: '3.12.3', torchCuda: '12.8',
    modules: { dynamo: ok(VERIFIED), vllm: ok('0.11.0'), torch: ok('2.8.0+cu128'), ...modules },
    ...o,
  };
}
function mockerSetup() {
  const recipe = recipeFrom({ engine: 'mocker' });
  return { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) };
}
function disaggSetup() {
  const recipe = recipeFrom({ workers: [{ role: 'prefill', gpuMemoryUtilization: 0.38 }, { role: 'decode', gpuMemoryUtilization: 0.38 }] });
  return { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) };
}

describe('python.env: the verified release passes', () => {
  it('lists the interpreter and every module under the verdict, with the evidence scripts read', async () => {
    const r = await check.run(fakeFacts({ python: vllmEnv() }));
    expect(r).toEqual({
      status: 'pass',
      summary: `Python 3.12.3, dynamo ${VERIFIED}, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8) (frontend and mocker verified; the CUDA vLLM worker is not run by dynamo-dev's tests)`,
      details: [`${PY}: Python 3.12.3`, `dynamo ${VERIFIED}`, 'vllm 0.11.0', 'torch 2.8.0+cu128 (CUDA 12.8)'],
      fix: null,
      evidence: {
        interpreter: PY, pythonVersion: '3.12.3', torchCuda: '12.8',
        modules: { dynamo: ok(VERIFIED), vllm: ok('0.11.0'), torch: ok('2.8.0+cu128') },
        required: ['dynamo', 'vllm', 'torch'],
        dynamo: { version: VERIFIED, support: 'verified', verified: VERIFIED, supported: `>=${SUPPORTED_MIN} <${SUPPORTED_BELOW}` },
        dists: null,
      },
    });
  });

  it('an unknown version reads "(version unknown)", a CPU torch has no CUDA note, an unknown Python "?"', async () => {
    const r = await check.run(fakeFacts({ python: vllmEnv({ vllm: ok(null), torch: ok('2.8.0+cpu') }, { torchCuda: null, pythonVersion: null }) }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe(`Python ?, dynamo ${VERIFIED}, vllm (version unknown), torch 2.8.0+cpu (frontend and mocker verified; the CUDA vLLM worker is not run by dynamo-dev's tests)`);
    expect(r.details[0]).toBe(`${PY}: Python ?`);
  });

  it('a dynamo without a version cannot be placed: passes without "(verified)"', async () => {
    const r = await check.run(fakeFacts({ python: vllmEnv({ dynamo: ok(null) }) }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('Python 3.12.3, dynamo (version unknown), vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8)');
    expect(r.evidence).toMatchObject({ dynamo: { version: null, support: null } });
  });
});

describe('python.env: missing modules', () => {
  it('one missing module: the engine that needs it, the import error, and the one pip line', async () => {
    const r = await check.run(fakeFacts({ python: vllmEnv({ torch: missing('torch') }) }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: `${PY} cannot import torch (needed by the vllm engine): torch (ModuleNotFoundError: No module named 'torch')`,
      fix: `\`${PY} -m pip install "ai-dynamo[vllm]"\`, or ${HINT}`,
      details: [`${PY}: Python 3.12.3`, `dynamo ${VERIFIED}`, 'vllm 0.11.0', "torch: missing (ModuleNotFoundError: No module named 'torch')"],
    });
  });

  it('several missing: named together, the package said once', async () => {
    const r = await check.run(fakeFacts({ python: vllmEnv({ vllm: missing('vllm'), torch: missing('torch') }) }));
    expect(r.summary).toBe(
      `${PY} cannot import vllm, torch (needed by the vllm engine): vllm (ModuleNotFoundError: No module named 'vllm'), torch (ModuleNotFoundError: No module named 'torch')`,
    );
    expect(r.fix).toBe(`\`${PY} -m pip install "ai-dynamo[vllm]"\`, or ${HINT}`);
  });

  it('a module the probe never asked about is "not asked", and one failing without a message "import failed"', async () => {
    const py = vllmEnv();
    delete py.modules.torch;
    py.modules.vllm = { ok: false, version: null, error: null };
    const r = await check.run(fakeFacts({ python: py }));
    expect(r.summary).toBe(`${PY} cannot import vllm, torch (needed by the vllm engine): vllm (not asked), torch (not asked)`);
    expect(r.details).toEqual([`${PY}: Python 3.12.3`, `dynamo ${VERIFIED}`, 'vllm: missing (import failed)']);
  });

  it('disaggregated: nixl is needed for the KV transfer and installs as nixl', async () => {
    const { recipe, plan } = disaggSetup();
    const r = await check.run(fakeFacts({ python: vllmEnv({ nixl: missing('nixl') }) }, { recipe, plan }));
    expect(r.summary).toBe(`${PY} cannot import nixl (needed by the vllm engine and disaggregated KV transfer): nixl (ModuleNotFoundError: No module named 'nixl')`);
    expect(r.fix).toBe(`\`${PY} -m pip install nixl\`, or ${HINT}`);
    expect(r.evidence).toMatchObject({ required: ['dynamo', 'vllm', 'torch', 'nixl'] });
  });

  it('disaggregated with nixl present passes, and lists nixl', async () => {
    const { recipe, plan } = disaggSetup();
    const r = await check.run(fakeFacts({ python: vllmEnv({ nixl: ok('0.6.0') }) }, { recipe, plan }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe(`Python 3.12.3, dynamo ${VERIFIED}, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8), nixl 0.6.0 (frontend and mocker verified; the CUDA vLLM worker is not run by dynamo-dev's tests)`);
  });

  it('the mocker: a missing module fails without naming an engine, and installs plain ai-dynamo once', async () => {
    const { recipe, plan } = mockerSetup();
    const py: PythonFacts = { ...vllmEnv(), torchCuda: null, modules: { dynamo: ok(VERIFIED), 'dynamo.frontend': missing('dynamo.frontend'), 'dynamo.mocker': missing('dynamo.mocker') } };
    const r = await check.run(fakeFacts({ python: py }, { recipe, plan }));
    expect(r.summary).toBe(
      `${PY} cannot import dynamo.frontend, dynamo.mocker: dynamo.frontend (ModuleNotFoundError: No module named 'dynamo.frontend'), dynamo.mocker (ModuleNotFoundError: No module named 'dynamo.mocker')`,
    );
    expect(r.fix).toBe(`\`${PY} -m pip install ai-dynamo\`, or ${HINT}`);
    expect(r.evidence).toMatchObject({ required: ['dynamo', 'dynamo.frontend', 'dynamo.mocker'] });
  });

  it('dynamo itself missing: the vLLM engine installs "ai-dynamo[vllm]", the mocker plain ai-dynamo', async () => {
    const r = await check.run(fakeFacts({ python: vllmEnv({ dynamo: missing('dynamo') }) }));
    expect(r.fix).toBe(`\`${PY} -m pip install "ai-dynamo[vllm]"\`, or ${HINT}`);
    expect(r.evidence).toMatchObject({ dynamo: { version: null, support: null } });
    const { recipe, plan } = mockerSetup();
    const py: PythonFacts = { ...vllmEnv(), modules: { 'dynamo.frontend': ok('1'), 'dynamo.mocker': ok('1') } };
    const m = await check.run(fakeFacts({ python: py }, { recipe, plan }));
    expect(m.summary).toBe(`${PY} cannot import dynamo: dynamo (not asked)`);
    expect(m.fix).toBe(`\`${PY} -m pip install ai-dynamo\`, or ${HINT}`);
  });

  it('an interpreter that cannot run fails with its error, the hint, and the interpreter as evidence', async () => {
    const r = await check.run(fakeFacts({ python: { interpreter: 'python3.12', ok: false, error: 'not found (ENOENT)', pythonVersion: null, modules: {}, torchCuda: null } }));
    expect(r).toEqual({
      status: 'fail',
      summary: 'the Python interpreter could not be asked: not found (ENOENT)',
      details: ['interpreter: python3.12'],
      fix: HINT,
      evidence: { interpreter: 'python3.12', error: 'not found (ENOENT)' },
    });
    const silent = await check.run(fakeFacts({ python: { interpreter: 'python3', ok: false, error: null, pythonVersion: null, modules: {}, torchCuda: null } }));
    expect(silent.summary).toBe('the Python interpreter could not be asked: unknown error');
  });
});

describe('python.env: the Dynamo release', () => {
  it('too old to plan for: fails with the range and the upgrade line for each engine', async () => {
    const r = await check.run(fakeFacts({ python: vllmEnv({ dynamo: ok('0.8.1') }) }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: `Python 3.12.3, dynamo 0.8.1, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8): Dynamo 0.8.1 is older than ${SUPPORTED_MIN}, the first release that runs on one host without etcd and NATS`,
      fix: `\`${PY} -m pip install --upgrade "ai-dynamo[vllm]"\`; see docs/dynamo-versions.md`,
    });
    expect(r.details.at(-1)).toBe(RANGE);
    const { recipe, plan } = mockerSetup();
    const py: PythonFacts = { ...vllmEnv(), modules: { dynamo: ok('0.8.1'), 'dynamo.frontend': ok('0.8.1'), 'dynamo.mocker': ok('0.8.1') } };
    const m = await check.run(fakeFacts({ python: py }, { recipe, plan }));
    expect(m.summary).toBe(`Python 3.12.3, dynamo 0.8.1: Dynamo 0.8.1 is older than ${SUPPORTED_MIN}, the first release that runs on one host without etcd and NATS`);
    expect(m.fix).toBe(`\`${PY} -m pip install --upgrade ai-dynamo\`; see docs/dynamo-versions.md`);
  });

  it('exactly the oldest supported release is not too old: a warning', async () => {
    const r = await check.run(fakeFacts({ python: vllmEnv({ dynamo: ok(SUPPORTED_MIN) }) }));
    expect(r.status).toBe('warn');
    expect(r.summary).toBe(
      `Python 3.12.3, dynamo ${SUPPORTED_MIN}, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8); Dynamo ${SUPPORTED_MIN} is outside the range dynamo-dev has verified (${VERIFIED}): plans follow its release notes, untested here`,
    );
    expect(r.fix).toBe(`to run the verified release: \`${PY} -m pip install "ai-dynamo[vllm]==${VERIFIED}"\`; docs/dynamo-versions.md lists what changed between releases`);
    expect(r.details.at(-1)).toBe(RANGE);
  });

  it('exactly the first unknown release is newer: a warning that plans follow the newest release the table knows', async () => {
    const { recipe, plan } = mockerSetup();
    const py: PythonFacts = { ...vllmEnv(), modules: { dynamo: ok(SUPPORTED_BELOW), 'dynamo.frontend': ok(SUPPORTED_BELOW), 'dynamo.mocker': ok(SUPPORTED_BELOW) } };
    const r = await check.run(fakeFacts({ python: py }, { recipe, plan }));
    expect(r.status).toBe('warn');
    expect(r.summary).toBe(`Python 3.12.3, dynamo ${SUPPORTED_BELOW}; Dynamo ${SUPPORTED_BELOW} is newer than any release dynamo-dev knows: plans follow ${NEWEST_KNOWN}'s flags (${NEWEST_KNOWN} itself known from source only)`);
    expect(r.fix).toBe(`to run the verified release: \`${PY} -m pip install ai-dynamo==${VERIFIED}\`; docs/dynamo-versions.md lists what changed between releases`);
  });

  it('a release known from source only (1.7.x): a warning that says so, the verified release as the fix; its dev builds are still 1.6', async () => {
    const { recipe, plan } = mockerSetup();
    for (const v of [FROM_SOURCE, '1.7.1']) {
      const py: PythonFacts = { ...vllmEnv(), modules: { dynamo: ok(v), 'dynamo.frontend': ok(v), 'dynamo.mocker': ok(v) } };
      const r = await check.run(fakeFacts({ python: py }, { recipe, plan }));
      expect(r.status).toBe('warn');
      expect(r.summary).toBe(`Python 3.12.3, dynamo ${v}; Dynamo ${v}: from source, not run here (dynamo-dev read its flags from Dynamo's source and release notes; its log lines and endpoints are assumed as in ${VERIFIED})`);
      expect(r.fix).toBe(`to run the verified release: \`${PY} -m pip install ai-dynamo==${VERIFIED}\`; docs/dynamo-versions.md lists what changed between releases`);
      expect(r.evidence).toMatchObject({ dynamo: { version: v, support: 'from-source' } });
    }
    const dev = '1.7.0.dev20261026';
    const r = await check.run(fakeFacts({ python: { ...vllmEnv(), modules: { dynamo: ok(dev), 'dynamo.frontend': ok(dev), 'dynamo.mocker': ok(dev) } } }, { recipe, plan }));
    expect(r.summary).toContain(`Dynamo ${dev} is outside the range dynamo-dev has verified`);
  });
});
