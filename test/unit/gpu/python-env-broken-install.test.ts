import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/python.env.js';
import { brokenInstall, missingModuleOf } from '../../../src/doctor/checks/python-install.js';
import type { PythonFacts } from '../../../src/host/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// python.env tells a broken Dynamo install (pip's metadata says installed, the modules do not
// import) from a missing one and from a working one, and names the reinstall for the interpreter
// it found (sys.executable), at the installed version.

const EXE = '/home/u/.cache/dynamo-dev/envs/1.6.1-mocker/bin/python3.12';
type Mod = PythonFacts['modules'][string];
const ok = (version: string | null): Mod => ({ ok: true, version, error: null });
const bad = (error: string): Mod => ({ ok: false, version: null, error });
const env = (modules: Record<string, Mod>, dists: Record<string, string | null> | undefined): PythonFacts => ({
  interpreter: 'python3', executable: EXE, ok: true, error: null, pythonVersion: '3.12.3', torchCuda: null, modules, ...(dists ? { dists } : {}),
});
const mocker = () => {
  const recipe = recipeFrom({ engine: 'mocker' });
  return { recipe, plan: buildPlan({ recipe, runDir: '/tmp/x' }) };
};
const run = (py: PythonFacts) => check.run(fakeFacts({ python: py }, mocker()));
const NO_CORE = "ModuleNotFoundError: No module named 'dynamo._core'";

describe('python.env: a broken install', () => {
  it('ai-dynamo without ai-dynamo-runtime: dynamo.frontend fails on dynamo._core; reinstall both wheels at 1.6.1 with the environment\'s own interpreter', async () => {
    const r = await run(env({ dynamo: ok('1.6.1'), 'dynamo.frontend': bad(NO_CORE), 'dynamo.mocker': bad(NO_CORE) }, { 'ai-dynamo': '1.6.1', 'ai-dynamo-runtime': null }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe(`ai-dynamo 1.6.1 is installed for ${EXE}, but dynamo.frontend and dynamo.mocker do not import (${NO_CORE}): a broken install; ai-dynamo-runtime (dynamo._core) is not installed`);
    expect(r.fix).toBe(`reinstall both wheels at that version, without touching the rest: \`${EXE} -m pip install --force-reinstall --no-deps ai-dynamo==1.6.1 ai-dynamo-runtime==1.6.1\``);
    expect(r.details.at(-1)).toBe('pip metadata: ai-dynamo 1.6.1, ai-dynamo-runtime not installed');
    expect(r.evidence.install).toEqual({ state: 'broken', kind: 'dynamo-files', requirement: null, dists: { 'ai-dynamo': '1.6.1', 'ai-dynamo-runtime': null } });
  });

  it('metadata without its module (the package folder removed): the same reinstall, at the version the metadata names', async () => {
    const gone = "ModuleNotFoundError: No module named 'dynamo'";
    const r = await run(env({ dynamo: bad(gone), 'dynamo.frontend': bad(gone), 'dynamo.mocker': bad(gone) }, { 'ai-dynamo': '1.3.1', 'ai-dynamo-runtime': '1.3.1' }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe(`ai-dynamo 1.3.1 and ai-dynamo-runtime 1.3.1 are installed for ${EXE}, but dynamo, dynamo.frontend and dynamo.mocker do not import (${gone}): a broken install`);
    expect(r.fix).toContain(`\`${EXE} -m pip install --force-reinstall --no-deps ai-dynamo==1.3.1 ai-dynamo-runtime==1.3.1\``);
  });

  it('a requirement of ai-dynamo missing: install ai-dynamo at its version (its requirements come with it), pip check, or setup', async () => {
    const dep = "ModuleNotFoundError: No module named 'msgspec'";
    const r = await run(env({ dynamo: ok('1.6.1'), 'dynamo.frontend': bad(dep), 'dynamo.mocker': ok('1.6.1') }, { 'ai-dynamo': '1.6.1', 'ai-dynamo-runtime': '1.6.1' }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe(`ai-dynamo 1.6.1 and ai-dynamo-runtime 1.6.1 are installed for ${EXE}, but dynamo.frontend does not import: a requirement of ai-dynamo is missing (${dep})`);
    expect(r.fix).toBe(`\`${EXE} -m pip install "ai-dynamo==1.6.1"\` installs its missing requirements (\`${EXE} -m pip check\` lists them); where its aisimulate placeholder cannot be fetched, \`dynamo-dev setup --release 1.6.1\` builds a working environment`);
    expect(r.evidence.install).toMatchObject({ kind: 'requirement', requirement: 'msgspec' });
  });

  it('not installed at all (no metadata): the install line as before, not "broken"', async () => {
    const none = (n: string) => bad(`ModuleNotFoundError: No module named '${n}'`);
    const r = await run(env({ dynamo: none('dynamo'), 'dynamo.frontend': none('dynamo'), 'dynamo.mocker': none('dynamo') }, { 'ai-dynamo': null, 'ai-dynamo-runtime': null }));
    expect(r.status).toBe('fail');
    expect(r.summary).toMatch(/^python3 cannot import dynamo, dynamo\.frontend, dynamo\.mocker/);
    expect(r.fix).toMatch(/^`python3 -m pip install ai-dynamo`/);
    expect(r.evidence.install).toBeUndefined();
  });

  it('a working install with its metadata passes (and says verified); facts without metadata (older probe) judge as before', async () => {
    const r = await run(env({ dynamo: ok('1.6.1'), 'dynamo.frontend': ok('1.6.1'), 'dynamo.mocker': ok('1.6.1') }, { 'ai-dynamo': '1.6.1', 'ai-dynamo-runtime': '1.6.1' }));
    expect(r.status).toBe('pass');
    expect(r.summary).toMatch(/ \(verified\)$/);
    expect(r.evidence.dists).toEqual({ 'ai-dynamo': '1.6.1', 'ai-dynamo-runtime': '1.6.1' });
    expect(brokenInstall(env({ 'dynamo.frontend': bad(NO_CORE) }, undefined), ['dynamo.frontend'])).toBeNull();
    // Only Dynamo's own modules make it broken: a missing vllm is the install line of the vllm engine.
    expect(brokenInstall(env({ vllm: bad("ModuleNotFoundError: No module named 'vllm'") }, { 'ai-dynamo': '1.6.1', 'ai-dynamo-runtime': '1.6.1' }), ['vllm'])).toBeNull();
  });

  it('missingModuleOf reads Python\'s own text', () => {
    expect(missingModuleOf("ModuleNotFoundError: No module named 'dynamo._core'")).toBe('dynamo._core');
    expect(missingModuleOf('ImportError: libcudart.so.13: cannot open shared object file')).toBeNull();
    expect(missingModuleOf(null)).toBeNull();
  });
});
