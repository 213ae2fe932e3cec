import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';

// doctor's python.env through the built binary on a Python tree laid out as pip leaves it: the
// wheels' metadata (*.dist-info) beside the dynamo package. ai-dynamo without ai-dynamo-runtime
// (what `pip install --no-deps ai-dynamo` leaves: dynamo.frontend fails on dynamo._core) is a
// broken install with the reinstall for this interpreter; with the runtime's module it passes.

let home: ReturnType<typeof tempHome>;
let site: string;
beforeEach(() => {
  home = tempHome('dd-e2e-pybroken-');
  site = join(home.dir, 'site-packages');
});
afterEach(() => home.cleanup());

function dist(name: string, version: string): void {
  const dir = join(site, `${name.replace(/-/g, '_')}-${version}.dist-info`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'METADATA'), `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`);
}
function dynamoPackage(): void {
  for (const sub of ['frontend', 'mocker']) {
    mkdirSync(join(site, 'dynamo', sub), { recursive: true });
    // As ai-dynamo's modules do: the runtime's compiled module first.
    writeFileSync(join(site, 'dynamo', sub, '__init__.py'), 'from dynamo._core import DistributedRuntime  # noqa: F401\n');
  }
  writeFileSync(join(site, 'dynamo', '__init__.py'), '');
}
const doctor = () => runCli(['doctor', '--only', 'python.env', '--recipe', 'mocker', '--python', 'python3', '--json'], fakeEnv(home, { vars: { PYTHONPATH: site } }));
const executable = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim();

interface Check { status: string; summary: string; fix: string | null; details: string[]; evidence: Record<string, any> }

describe('doctor python.env: a broken Dynamo install', () => {
  it('ai-dynamo 1.6.1 without ai-dynamo-runtime: fails as a broken install, with the exact reinstall for this interpreter; exit 1', async () => {
    dist('ai-dynamo', '1.6.1');
    dynamoPackage();
    const r = await doctor();
    const c = (JSON.parse(r.stdout) as { checks: Check[] }).checks[0];
    expect(c.status).toBe('fail');
    expect(c.summary).toBe(`ai-dynamo 1.6.1 is installed for ${executable}, but dynamo.frontend and dynamo.mocker do not import (ModuleNotFoundError: No module named 'dynamo._core'): a broken install; ai-dynamo-runtime (dynamo._core) is not installed`);
    expect(c.fix).toBe(`reinstall both wheels at that version, without touching the rest: \`${executable} -m pip install --force-reinstall --no-deps ai-dynamo==1.6.1 ai-dynamo-runtime==1.6.1\``);
    expect(c.evidence.install).toMatchObject({ state: 'broken', kind: 'dynamo-files' });
    expect(r.code).toBe(1);
  });

  it('the metadata left without the package (its folder removed): broken, not "not installed"', async () => {
    dist('ai-dynamo', '1.6.1');
    dist('ai-dynamo-runtime', '1.6.1');
    const c = (JSON.parse((await doctor()).stdout) as { checks: Check[] }).checks[0];
    expect(c.status).toBe('fail');
    expect(c.summary).toMatch(/^ai-dynamo 1\.6\.1 and ai-dynamo-runtime 1\.6\.1 are installed for \S+, but dynamo, dynamo\.frontend and dynamo\.mocker do not import \(ModuleNotFoundError: No module named 'dynamo'\): a broken install$/);
    expect(c.fix).toContain('--force-reinstall --no-deps ai-dynamo==1.6.1 ai-dynamo-runtime==1.6.1');
  });

  it('with the runtime\'s module in place the same tree passes, naming 1.6.1 (verified)', async () => {
    dist('ai-dynamo', '1.6.1');
    dist('ai-dynamo-runtime', '1.6.1');
    dynamoPackage();
    writeFileSync(join(site, 'dynamo', '_core.py'), 'DistributedRuntime = object\n');
    const r = await doctor();
    const c = (JSON.parse(r.stdout) as { checks: Check[] }).checks[0];
    expect(c.status, c.summary).toBe('pass');
    expect(c.summary).toMatch(/dynamo 1\.6\.1 in \S+site-packages \(on PYTHONPATH\) \(verified\)$/);
    expect(c.evidence.dists).toEqual({ 'ai-dynamo': '1.6.1', 'ai-dynamo-runtime': '1.6.1' });
    expect(r.code).toBe(0);
  });
});
