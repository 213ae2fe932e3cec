import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { portBlock } from '../helpers/runs.js';

// Which Dynamo a command runs after `setup` made more than one (issue 31): after
// `setup --release 1.4.2` beside a 1.6.1, `up mocker` ran 1.6.1 while setup's next line said
// `up mocker`. Now setup's next line carries `--release X` when X is not the default choice, every
// command that runs Dynamo takes `--release X`, and up's first line names the Dynamo version and
// interpreter it runs. The fake Python of setup's tests (test/fixtures/bin/setup) installs the
// release asked: its dist-info folder, as pip leaves it, is what the version is read from.

const home = tempHomes('dd-release-');
// Each test runs setup (the fake installer) once or twice and then several commands: ~12 s on a quiet
// machine, past the suite's 30 s default beside a whole suite on 2 cores.

function setupEnv(h: ReturnType<typeof home>, vars: Record<string, string | undefined> = {}) {
  const base = fakeEnv(h);
  return { ...base, PATH: [join(FIXTURES, 'bin', 'setup'), base.PATH].join(delimiter), FAKE_SETUP_FIXTURES: FIXTURES, ...vars };
}
const envDir = (h: ReturnType<typeof home>, name: string) => join(h.dir, 'cache', 'dynamo-dev', 'envs', name);
const planPython = async (args: string[], env: Record<string, string | undefined>) => {
  const r = await runCli(['up', 'mocker', '--dry-run', '--json', ...args], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { python: { interpreter: string; source: string }; dynamo: { version: string | null } };
};

describe('--release picks the environment setup made for a release', () => {
  it('setup 1.6.1 then 1.4.2: the second next line says --release 1.4.2; up and doctor run 1.4.2 with it, 1.6.1 without; up names both on its first line', async () => {
    const h = home();
    const env = setupEnv(h);
    const first = await runCli(['setup', '--engine', 'mocker'], env, { timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    // The only environment: the default choice, so the command needs no flag.
    expect(first.stdout).toMatch(/\n {2}next {4}dynamo-dev up mocker\n?$/);
    const second = await runCli(['setup', '--release', '1.4.2', '--engine', 'mocker'], env, { timeoutMs: 60_000 });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/\n {2}next {4}dynamo-dev up mocker --release 1\.4\.2\n?$/);
    // --json: the same command in the result.
    const j = (await runCli(['setup', '--release', '1.4.2', '--engine', 'mocker', '--json'], env)).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(j.at(-1)).toMatchObject({ event: 'result', ok: true, alreadyComplete: true, next: 'dynamo-dev up mocker --release 1.4.2' });

    const py161 = join(envDir(h, '1.6.1-mocker'), 'bin', 'python');
    const py142 = join(envDir(h, '1.4.2-mocker'), 'bin', 'python');
    // Without --release: the newest (unchanged); with it: that release's, and its flags (1.4.2 plans).
    expect(await planPython([], env)).toMatchObject({ python: { interpreter: py161, source: 'managed' }, dynamo: { version: '1.6.1' } });
    expect(await planPython(['--release', '1.4.2'], env)).toMatchObject({ python: { interpreter: py142, source: 'managed' }, dynamo: { version: '1.4.2' } });
    // X.Y: its newest X.Y.z; --release outranks $DYNAMO_DEV_PYTHON (a flag over the environment).
    expect((await planPython(['--release', '1.4'], { ...env, DYNAMO_DEV_PYTHON: '/usr/bin/python3' })).python.interpreter).toBe(py142);

    // doctor judges the same interpreter.
    const doc = JSON.parse((await runCli(['doctor', '--recipe', 'mocker', '--release', '1.4.2', '--only', 'python.env', '--json'], env)).stdout);
    expect(doc.checks[0].evidence.interpreter).toBe(py142);
    // 1.4.2 is not the verified release: the way to it is setup's environment beside this one, never
    // a pip install into the environment setup made for 1.4.2 (its record would then be untrue).
    expect(doc.checks[0]).toMatchObject({ status: 'warn', fix: expect.stringContaining('to run the verified release: `dynamo-dev setup --release 1.6.1 --engine mocker`, then give `--release 1.6.1` to up, doctor and bench') });
    expect(doc.checks[0].fix).not.toContain('pip install');

    // up's first line: the Dynamo version and the interpreter that run, before anything else.
    const base = await portBlock(27_800, 200);
    const up = await runCli(['up', 'mocker', '--release', '1.4.2', '--detach', '--no-preflight', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`], env, { timeoutMs: 60_000 });
    expect(up.code, up.stdout + up.stderr).toBe(0);
    expect(up.stdout.split('\n')[0]).toBe(`up mocker · dynamo-dev/tiny · Dynamo 1.4.2 · ${py142}`);
    expect((await runCli(['teardown'], env)).code).toBe(0);
  }, 120_000);

  it('a release with no environment, a malformed one, and --release beside --python: one line each, exit 2, nothing started', async () => {
    const h = home();
    const env = setupEnv(h);
    expect((await runCli(['setup', '--engine', 'mocker'], env, { timeoutMs: 60_000 })).code).toBe(0);
    const none = await runCli(['up', 'mocker', '--release', '1.5.0'], env);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr.split('\n')).toEqual([
      'dynamo-dev: --release 1.5.0: no environment made by dynamo-dev setup runs the mocker with Dynamo 1.5.0 (set up: 1.6.1 (mocker))',
      'fix: dynamo-dev setup --release 1.5.0 --engine mocker',
    ]);
    // vLLM on the CPU names its own setup command.
    const cpu = await runCli(['up', 'agg', '--device', 'cpu', '--release', '1.6.1', '--dry-run'], env);
    expect(cpu.code).toBe(2);
    expect(cpu.stderr).toContain('fix: dynamo-dev setup --release 1.6.1 --device cpu');
    const bad = await runCli(['bench', 'mocker', '--release', '1.6.x'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('dynamo-dev: --release: "1.6.x" is not a release; give X.Y.Z (e.g. 1.6.1) or X.Y (its newest X.Y.z set up)');
    const both = await runCli(['--python', '/usr/bin/python3', 'export', 'k8s', 'mocker', '--release', '1.6.1'], env);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^dynamo-dev: --release and --python both name the interpreter/);
    expect(JSON.parse((await runCli(['status', '--json'], env)).stdout).runs).toEqual([]);
  }, 60_000);

  it('a python3 with Dynamo is the default choice: setup names its environment with --release in the next line', async () => {
    const h = home();
    // The recipe's python3 can import Dynamo (the fake on PYTHONPATH): up would run it, not the environment made.
    const env = setupEnv(h, { PYTHONPATH: join(FIXTURES, 'python') });
    const r = await runCli(['setup', '--engine', 'mocker'], env, { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\n {2}next {4}dynamo-dev up mocker --release 1\.6\.1\n?$/);
    // A --dir folder outside envs/: --release does not search there, so the next line names its interpreter.
    const dir = join(h.dir, 'my env');
    const own = await runCli(['setup', '--engine', 'mocker', '--dir', dir], env, { timeoutMs: 60_000 });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toContain(`\n  next    dynamo-dev up mocker --python '${join(dir, 'bin', 'python')}'`);
  }, 60_000);
});
