import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { records, upHarness } from '../helpers/up-run.js';

// Dynamo 1.7 through the built binary: in the release table from source and release notes only
// (no 1.7 wheel on this index, not run here). A user's 1.7 environment is faked as a virtualenv
// would hold it: pyvenv.cfg, bin/python, site-packages/ai_dynamo-1.7.0.dist-info (what `up` reads
// without starting Python, host/python/python.ts venvDistVersion, and what importlib.metadata
// reads for doctor), its dynamo modules the test fakes (FAKE_DYNAMO_VERSION=1.7.0).

const home = tempHomes('dd-dynamo17-');
const up = upHarness('dd-dynamo17-up-');
afterEach(() => up.cleanup());

interface Check { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: Record<string, any> }

/** A virtualenv whose ai-dynamo is `version`: its interpreter runs the system python3 with the fake modules. */
function fakeVenv(dir: string, version: string): string {
  const site = join(dir, 'lib', 'python3.12', 'site-packages');
  mkdirSync(join(site, `ai_dynamo-${version}.dist-info`), { recursive: true });
  writeFileSync(join(site, `ai_dynamo-${version}.dist-info`, 'METADATA'), `Metadata-Version: 2.1\nName: ai-dynamo\nVersion: ${version}\n`);
  writeFileSync(join(dir, 'pyvenv.cfg'), 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n');
  mkdirSync(join(dir, 'bin'));
  const python = join(dir, 'bin', 'python');
  writeFileSync(python, `#!/bin/sh\nPYTHONPATH="${site}:${join(FIXTURES, 'python')}" FAKE_DYNAMO_VERSION="${version}" exec python3 "$@"\n`);
  chmodSync(python, 0o755);
  return python;
}

describe('Dynamo 1.7: from source, not run here', () => {
  it('doctor: python.env warns that 1.7.0 is from source and not run here (exit 0, the verified release as the fix); up --dry-run shows 1.7\'s argv and says the same', async () => {
    const h = home();
    const python = fakeVenv(join(h.dir, 'venv17'), '1.7.0');
    const env = fakeEnv(h);

    const d = await runCli(['doctor', '--recipe', 'mocker', '--only', 'python.env', '--python', python, '--json'], env);
    expect(d.code, d.stderr).toBe(0);
    const c = (JSON.parse(d.stdout) as { checks: Check[] }).checks[0];
    expect(c.status).toBe('warn');
    expect(c.summary).toMatch(/^Python \d+\.\d+\.\d+, dynamo 1\.7\.0/);
    expect(c.summary).toContain('; Dynamo 1.7.0: from source, not run here (dynamo-dev read its flags from Dynamo\'s source and release notes; its log lines and endpoints are assumed as in 1.6.1)');
    expect(c.fix).toBe(`to run the verified release: \`${python} -m pip install ai-dynamo==1.6.1\`; docs/dynamo-versions.md lists what changed between releases`);
    expect(c.evidence.dynamo).toEqual({ version: '1.7.0', support: 'from-source', verified: '1.6.1', supported: '>=0.9.0 <1.8.0' });
    const text = await runCli(['doctor', '--recipe', 'mocker', '--only', 'python.env', '--python', python], env);
    expect(text.stdout).toContain('Dynamo 1.7.0: from source, not run here');

    // The plan: read from the venv's dist-info, 1.7's flags (the same as 1.6.1's for the built-in
    // recipes: none passes a router flag 1.7 removed), and the note in the plan's first line.
    const j = await runCli(['up', 'agg-router-approx', '--dry-run', '--json', '--python', python], env);
    expect(j.code, j.stderr).toBe(0);
    const plan = JSON.parse(j.stdout) as { dynamo: unknown; processes: { name: string; argv: string[]; env: Record<string, string> }[] };
    expect(plan.dynamo).toEqual({ version: '1.7.0', plannedFor: '1.7.0', assumed: false });
    const frontend = plan.processes.find((p) => p.name === 'frontend')!;
    expect(frontend.argv).toEqual([python, '-m', 'dynamo.frontend', '--http-port', '8000', '--router-mode', 'kv', '--no-router-kv-events', '--discovery-backend', 'file']);
    expect(frontend.env).toMatchObject({ DYN_DISCOVERY_BACKEND: 'file', DYN_EVENT_PLANE: 'zmq', DYN_REQUEST_PLANE: 'tcp' });
    for (const p of plan.processes) expect(p.argv.join(' '), p.name).not.toMatch(/--router-temperature|--router-kv-overlap-score|--load-aware|--router-queue/);
    const dry = await runCli(['up', 'mocker', '--dry-run', '--python', python], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout.split('\n')[0]).toContain('Dynamo 1.7.0 (from source, not run here: flags read from its source and release notes)');
    expect(dry.stdout).toContain(`${python} -m dynamo.mocker --model-path`);
  });

  it('up --dry-run on 1.7 with a router flag 1.7 removed: one line naming the field and where the setting lives now, exit 2; on 1.6.1 the same recipe plans', async () => {
    const h = home();
    const env = fakeEnv(h);
    const set = ['--set', 'frontend.args=["--router-temperature","0.5"]'];
    const r17 = await runCli(['up', 'mocker', '--dry-run', '--python', fakeVenv(join(h.dir, 'venv17'), '1.7.0'), ...set], env);
    expect(r17.code).toBe(2);
    expect(r17.stdout).toBe('');
    expect(r17.stderr.trim().split('\n')[0]).toBe(
      'dynamo-dev: mocker: frontend.args: --router-temperature was removed in Dynamo 1.7.0 (deprecated in 1.6): its setting is router_temperature in the default policy\'s parameters (worker_selection.instances[].parameters) of the YAML given with --router-policy-config',
    );
    expect(r17.stderr).toContain('--router-policy-config FILE');
    const r16 = await runCli(['up', 'mocker', '--dry-run', '--json', '--python', fakeVenv(join(h.dir, 'venv16'), '1.6.1'), ...set], env);
    expect(r16.code, r16.stderr).toBe(0);
    expect((JSON.parse(r16.stdout) as { processes: { argv: string[] }[] }).processes[0].argv).toContain('--router-temperature');
  });

  it('setup --release 1.7.0 --dry-run: refused in one line (from source, not run here, not on this index) with what would do; nothing made', async () => {
    for (const gpu of [undefined, 'desktop-595']) {
      const h = home();
      const env = fakeEnv(h, gpu ? { gpu } : {});
      const r = await runCli(['setup', '--release', '1.7.0', '--dry-run'], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        'dynamo-dev: --release 1.7.0 is known from source, not run here: no ai-dynamo 1.7.0 wheel was on the package index dynamo-dev was built against, so setup does not install it (its vllm extra pins vLLM 0.33.0, torch 2.14.0, CUDA 13.0, Python >= 3.11); ' +
          'what would: --release 1.6.1; install ai-dynamo 1.7.0 yourself where an index has it and pass its interpreter with --python: up plans for its flags and doctor warns that it is not run here',
      );
      expect(existsSync(join(h.dir, 'cache'))).toBe(false);
    }
  });

  it('up / doctor --release 1.7.0 with no environment for it: the fix is one that works (setup makes no 1.7), not `setup --release 1.7.0`', async () => {
    const h = home();
    const env = fakeEnv(h);
    for (const args of [['up', 'mocker', '--release', '1.7.0', '--dry-run'], ['doctor', '--recipe', 'mocker', '--release', '1.7.0']]) {
      const r = await runCli(args, env);
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr.split('\n')).toEqual([
        'dynamo-dev: --release 1.7.0: no environment made by dynamo-dev setup runs the mocker with Dynamo 1.7.0 (none set up yet), and setup makes none: Dynamo 1.7.0 is known from source, not run here (docs/dynamo-versions.md)',
        'fix: install ai-dynamo 1.7.0 yourself where an index has it and give its interpreter with --python, or run the verified release: dynamo-dev setup --release 1.6.1 --engine mocker',
      ]);
    }
    // Outside the table: the verified release; inside it: setup makes the one asked for.
    expect((await runCli(['up', 'agg', '--release', '1.9.0', '--dry-run'], env)).stderr).toContain('and setup makes none: it is outside the release table\nfix: dynamo-dev setup --release 1.6.1 --engine vllm');
    expect((await runCli(['up', 'mocker', '--release', '1.5.1', '--dry-run'], env)).stderr).toContain('(none set up yet)\nfix: dynamo-dev setup --release 1.5.1 --engine mocker');
  });

  it('up on a 1.7 environment: the first line says from source, not run here; the preflight\'s python.env warns the same; the run starts (the fakes play 1.7.0)', async () => {
    const s = await up.setup();
    const python = fakeVenv(join(s.dir, 'venv17'), '1.7.0');
    const u = await runCli(['up', 'mocker', '--detach', '--python', python, ...s.sets], s.env, { timeoutMs: 30_000 });
    expect(u.code, `${u.stdout}\n${u.stderr}`).toBe(0);
    expect(u.stdout.split('\n')[0], u.stdout).toBe(`up mocker · dynamo-dev/tiny · Dynamo 1.7.0 (from source, not run here) · ${python}`);
    expect(`${u.stdout}\n${u.stderr}`).toContain('Dynamo 1.7.0: from source, not run here');
    expect(records(s.stateDir)[0].plan.dynamo).toMatchObject({ version: '1.7.0', assumed: false });
    expect((await runCli(['teardown'], s.env)).code).toBe(0);
  });
});
