import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import check, { importRoot, whereText } from '../../../src/doctor/checks/python.env.js';
import { probePython } from '../../../src/host/python/python.js';
import { FIXTURES } from '../../helpers/cli.js';
import type { PythonFacts, PythonModule } from '../../../src/host/types.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// python.env says WHERE Python found dynamo (and the other modules): a second environment on
// PYTHONPATH, or a stale `dynamo/` folder merged into the namespace package, is the classic cause
// of a wrong version, and the version alone does not show it.

const VENV = '/home/u/venv/lib/python3.12/site-packages';
const OTHER = '/home/u/old-venv/lib/python3.12/site-packages';
const at = (version: string, ...paths: string[]): PythonModule => ({ ok: true, version, error: null, path: paths[0] ?? null, paths });
const facts = (modules: Record<string, PythonModule>): PythonFacts => ({
  interpreter: '/home/u/venv/bin/python', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: '12.8', modules,
});
const inVenv = () => ({
  dynamo: at('1.6.1', `${VENV}/dynamo`), torch: at('2.8.0+cu128', `${VENV}/torch`), nixl: at('0.6.0', `${VENV}/nixl`), vllm: at('0.11.0', `${VENV}/vllm`),
});

describe('importRoot: the sys.path entry a module was found in', () => {
  it('a package folder, a subpackage folder, and a plain module file', () => {
    expect(importRoot('dynamo', `${VENV}/dynamo`)).toBe(VENV);
    expect(importRoot('dynamo.frontend', `${VENV}/dynamo/frontend`)).toBe(VENV);
    expect(importRoot('six', `${VENV}/six.py`)).toBe(VENV);
    expect(importRoot('dynamo._core', `${VENV}/dynamo/_core.abi3.so`)).toBe(VENV);
  });
});

describe('whereText: where the summary\'s modules come from', () => {
  it('one entry for all: said once; a single module: without "all"', () => {
    expect(whereText(['dynamo', 'vllm', 'torch'], inVenv(), undefined)).toBe(`; all in ${VENV}`);
    expect(whereText(['dynamo'], inVenv(), undefined)).toBe(` in ${VENV}`);
  });

  it('dynamo from another environment on PYTHONPATH: each entry named, the PYTHONPATH one marked', () => {
    const mods = { ...inVenv(), dynamo: at('1.2.0', `${OTHER}/dynamo`) };
    expect(whereText(['dynamo', 'vllm', 'torch'], mods, `/elsewhere:${OTHER}/`)).toBe(`; dynamo in ${OTHER} (on PYTHONPATH), vllm and torch in ${VENV}`);
  });

  it('a namespace package merged from two installs names both, in import order', () => {
    const mods = { dynamo: at('1.6.1', `${OTHER}/dynamo`, `${VENV}/dynamo`) };
    expect(whereText(['dynamo'], mods, undefined)).toBe(` in ${OTHER} + ${VENV}`);
  });

  it('no location known (facts not made by the probe): nothing is said; a module without one is not counted in "all"', () => {
    const bare = { dynamo: { ok: true, version: '1.6.1', error: null }, vllm: { ok: true, version: '0.11.0', error: null } };
    expect(whereText(['dynamo', 'vllm'], bare, undefined)).toBe('');
    expect(whereText(['dynamo', 'vllm'], { ...bare, dynamo: at('1.6.1', `${VENV}/dynamo`) }, undefined)).toBe(`; dynamo in ${VENV}`);
  });
});

describe('python.env names the folders', () => {
  it('pass: the summary says where (one line a person reads), each detail line the module\'s folder', async () => {
    const r = await check.run(fakeFacts({ python: facts(inVenv()) }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe(`Python 3.12.3, dynamo 1.6.1, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8); all in ${VENV} (frontend and mocker verified; the CUDA vLLM worker is not run by dynamo-dev's tests)`);
    expect(r.details).toEqual([
      '/home/u/venv/bin/python: Python 3.12.3',
      `dynamo 1.6.1 at ${VENV}/dynamo`,
      `torch 2.8.0+cu128 (CUDA 12.8) at ${VENV}/torch`,
      `nixl 0.6.0 at ${VENV}/nixl`,
      `vllm 0.11.0 at ${VENV}/vllm`,
    ]);
    expect((r.evidence.modules as Record<string, PythonModule>).dynamo).toEqual({ ok: true, version: '1.6.1', error: null, path: `${VENV}/dynamo`, paths: [`${VENV}/dynamo`] });
  });

  it('warn: an old dynamo shadowing the venv from PYTHONPATH shows in the summary beside the version', async () => {
    const mods = { ...inVenv(), dynamo: at('1.2.0', `${OTHER}/dynamo`, `${VENV}/dynamo`) };
    const r = await check.run(fakeFacts({ python: facts(mods) }, { env: { PYTHONPATH: OTHER } }));
    expect(r.status).toBe('warn');
    expect(r.summary).toMatch(new RegExp(`^Python 3\\.12\\.3, dynamo 1\\.2\\.0, vllm 0\\.11\\.0, torch 2\\.8\\.0\\+cu128 \\(CUDA 12\\.8\\); dynamo in ${OTHER} \\(on PYTHONPATH\\) \\+ ${VENV}, vllm and torch in ${VENV}; Dynamo 1\\.2\\.0 is outside`));
    expect(r.details).toContain(`dynamo 1.2.0 at ${OTHER}/dynamo + ${VENV}/dynamo (one namespace package merged from 2 folders: each can be a different install)`);
    // Installing into the venv would change nothing while PYTHONPATH comes first: the fix says so first.
    expect(r.fix).toBe(`dynamo is imported from ${OTHER}, which PYTHONPATH adds: if that is not the install you mean, remove it from PYTHONPATH; or to run the verified release: \`/home/u/venv/bin/python -m pip install "ai-dynamo[vllm]==1.6.1"\`; docs/dynamo-versions.md lists what changed between releases`);
  });

  it('the PYTHONPATH note only when dynamo comes from a PYTHONPATH entry (a too-old one fails with it)', async () => {
    const own = await check.run(fakeFacts({ python: facts({ ...inVenv(), dynamo: at('1.2.0', `${VENV}/dynamo`) }) }, { env: { PYTHONPATH: OTHER } }));
    expect(own.status).toBe('warn');
    expect(own.fix).toMatch(/^to run the verified release: /);
    const old = await check.run(fakeFacts({ python: facts({ ...inVenv(), dynamo: at('0.8.0', `${OTHER}/dynamo`) }) }, { env: { PYTHONPATH: `${OTHER}/` } }));
    expect(old.status).toBe('fail');
    expect(old.fix).toBe(`dynamo is imported from ${OTHER}, which PYTHONPATH adds: if that is not the install you mean, remove it from PYTHONPATH; or \`/home/u/venv/bin/python -m pip install --upgrade "ai-dynamo[vllm]"\`; see docs/dynamo-versions.md`);
  });

  it('fail: the modules that did import still say where they are; the missing one says why', async () => {
    const mods = { ...inVenv(), vllm: { ok: false, version: null, error: "ModuleNotFoundError: No module named 'vllm'", path: null, paths: [] } };
    const r = await check.run(fakeFacts({ python: facts(mods) }));
    expect(r.status).toBe('fail');
    expect(r.details).toContain(`dynamo 1.6.1 at ${VENV}/dynamo`);
    expect(r.details).toContain("vllm: missing (ModuleNotFoundError: No module named 'vllm')");
  });

  it('mocker: only dynamo in the summary; its own modules\' folders in the details', async () => {
    const recipe = recipeFrom({ engine: 'mocker' });
    const mods = { dynamo: at('1.6.1', `${VENV}/dynamo`), 'dynamo.frontend': at('1.6.1', `${VENV}/dynamo/frontend`), 'dynamo.mocker': at('1.6.1', `${VENV}/dynamo/mocker`) };
    const r = await check.run(fakeFacts({ python: facts(mods) }, { recipe }));
    expect(r.summary).toBe(`Python 3.12.3, dynamo 1.6.1 in ${VENV} (verified)`);
    expect(r.details).toContain(`dynamo.frontend 1.6.1 at ${VENV}/dynamo/frontend`);
  });
});

describe('the probe reports a plain module by its file', () => {
  it('nixl as a single nixl.py: its file, and the summary\'s entry is the folder holding it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dd-plain-module-'));
    try {
      writeFileSync(join(dir, 'nixl.py'), '__version__ = "0.6.1"\n');
      const py = await probePython('python3', 'vllm', { PATH: process.env.PATH, PYTHONPATH: [dir, join(FIXTURES, 'python')].join(delimiter) }, 10_000);
      expect(py.modules.nixl).toEqual({ ok: true, version: '0.6.1', error: null, path: join(dir, 'nixl.py'), paths: [join(dir, 'nixl.py')] });
      expect(whereText(['nixl'], py.modules, dir)).toBe(` in ${dir} (on PYTHONPATH)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
