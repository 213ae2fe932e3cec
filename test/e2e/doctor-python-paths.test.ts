import { mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';

// python.env through the built binary says where the interpreter found dynamo and the other
// modules: a second environment on PYTHONPATH (the classic cause of a wrong Dynamo version) shows
// in the summary, and a namespace package merged from two installs shows both folders.

const home = tempHomes('dd-python-paths-');
const FAKES = join(FIXTURES, 'python');

interface CheckJson { status: string; summary: string; details: string[]; fix: string | null; evidence: { modules: Record<string, { path: string | null; paths: string[]; version: string | null }> } }

async function pythonEnv(vars: Record<string, string>, args: string[] = []): Promise<CheckJson> {
  const h = home();
  const r = await runCli(['doctor', '--recipe', 'agg', '--only', 'python.env', '--json', ...args], fakeEnv(h, { python: true, vars }));
  return (JSON.parse(r.stdout) as { checks: CheckJson[] }).checks[0];
}

/** A folder holding Python packages: `files` maps a path inside it to its text. */
function packages(files: Record<string, string>): string {
  const dir = join(home().dir, 'site-packages');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('python.env: where each module was imported from', () => {
  it('the fake environment: every module\'s folder in the JSON, one "all in" for the summary, marked as PYTHONPATH\'s', async () => {
    const c = await pythonEnv({});
    expect(c.status).toBe('pass');
    expect(c.summary).toMatch(/^Python \d+\.\d+\.\d+, dynamo 1\.6\.1, /);
    expect(c.summary.endsWith(`, torch 2.8.0+cu128 (CUDA 12.8); all in ${FAKES} (on PYTHONPATH) (frontend and mocker verified; the CUDA vLLM worker is not run by dynamo-dev's tests)`)).toBe(true);
    expect(c.evidence.modules.dynamo).toMatchObject({ path: join(FAKES, 'dynamo'), paths: [join(FAKES, 'dynamo')] });
    expect(c.evidence.modules.vllm).toMatchObject({ path: join(FAKES, 'vllm'), paths: [join(FAKES, 'vllm')] });
    expect(c.details).toContain(`dynamo 1.6.1 at ${join(FAKES, 'dynamo')}`);

    // The same words for a person.
    const h = home();
    const human = await runCli(['doctor', '--recipe', 'agg', '--only', 'python.env'], fakeEnv(h, { python: true }));
    expect(human.stdout).toContain(`dynamo 1.6.1, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8); all in ${FAKES} (on PYTHONPATH) (frontend and mocker verified; the CUDA vLLM worker is not run by dynamo-dev's tests)`);
  });

  it('an older dynamo earlier on PYTHONPATH: the summary names both places, the detail the folder it came from', async () => {
    const old = packages({ 'dynamo/__init__.py': '__version__ = "1.2.0"\n' });
    const c = await pythonEnv({ PYTHONPATH: [old, FAKES].join(delimiter) });
    expect(c.status).toBe('warn');
    expect(c.summary).toContain(`dynamo 1.2.0, vllm 0.11.0, torch 2.8.0+cu128 (CUDA 12.8); dynamo in ${old} (on PYTHONPATH), vllm and torch in ${FAKES} (on PYTHONPATH); Dynamo 1.2.0 is outside`);
    expect(c.details).toContain(`dynamo 1.2.0 at ${join(old, 'dynamo')}`);
    expect(c.evidence.modules.dynamo.paths).toEqual([join(old, 'dynamo')]);
    expect(c.fix).toMatch(new RegExp(`^dynamo is imported from ${old}, which PYTHONPATH adds: if that is not the install you mean, remove it from PYTHONPATH; or to run the verified release: `));
  });

  it('a namespace dynamo merged from two folders (Dynamo ships it so): both folders, and where each submodule came from', async () => {
    const a = packages({ 'dynamo/frontend/__init__.py': '' });
    const b = packages({ 'dynamo/mocker/__init__.py': '' });
    const c = await pythonEnv({ PYTHONPATH: [a, b].join(delimiter) }, ['--recipe', 'mocker']);
    expect(c.status).toBe('pass');
    expect(c.evidence.modules.dynamo.paths).toEqual([join(a, 'dynamo'), join(b, 'dynamo')]);
    expect(c.summary).toMatch(new RegExp(`, dynamo \\(version unknown\\) in ${a} \\(on PYTHONPATH\\) \\+ ${b} \\(on PYTHONPATH\\)$`));
    expect(c.details).toEqual(expect.arrayContaining([
      `dynamo (version unknown) at ${join(a, 'dynamo')} + ${join(b, 'dynamo')} (one namespace package merged from 2 folders: each can be a different install)`,
      `dynamo.frontend (version unknown) at ${join(a, 'dynamo', 'frontend')}`,
      `dynamo.mocker (version unknown) at ${join(b, 'dynamo', 'mocker')}`,
    ]));
  });
});
