import { afterAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { bindable } from '../helpers/ports.js';
import { join } from 'node:path';
import { FIXTURES, fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { runCliMeasured } from '../helpers/rss.js';
import { assertRoot, otherHome, OTHER_UID, runCliAs } from '../helpers/second-user.js';

// Issue 12, causes 8 and 11 through the built binary: crafted recipes, --set values, config
// files and flags are input errors (exit 2, one line naming the field or file), never a crash,
// an abort, a silently changed meaning or a misleading verdict.

const homes: { cleanup: () => void }[] = [];
afterAll(() => homes.forEach((h) => h.cleanup()));
function home() {
  const h = tempHome('dd-input-');
  homes.push(h);
  return { ...h, env: fakeEnv(h) };
}

/** Exit 2 and exactly one line on stderr (commander's own errors add its usage hint line). */
function expectInputError(r: { code: number; stderr: string; stdout: string }, message: RegExp, lines = 1): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(lines);
  expect(r.stderr).toMatch(message);
}

const recipe = (h: { dir: string }, name: string, text: string) => {
  const p = join(h.dir, name);
  writeFileSync(p, text);
  return p;
};
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';

describe('cause 8: crafted input', () => {
  it('a YAML alias bomb: exit 2 naming the file, fast and in little memory', async () => {
    const h = home();
    let t = `${minimal}l0: &l0 [x, x, x, x, x, x, x, x, x]\n`;
    for (let i = 1; i < 12; i++) t += `l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]\n`;
    const p = recipe(h, 'bomb.yaml', t);
    const r = await runCliMeasured(['up', p, '--dry-run'], h.env);
    expectInputError(r, new RegExp(`^dynamo-dev: ${p}: invalid YAML: its aliases \\(\\*name\\) expand too far`));
    expect(r.maxRssMiB).toBeLessThan(150);
  });

  it('--set workers.999999999.role=agg: exit 2 naming the list (was a V8 abort, exit 134)', async () => {
    const h = home();
    const r = await runCliMeasured(['up', 'agg', '--dry-run', '--set', 'workers.999999999.role=agg'], h.env);
    expectInputError(r, /^dynamo-dev: --set workers\.999999999\.role=agg: workers has 1 entry; index 999999999 is past the end \(use 0 to 1\)$/);
    expect(r.maxRssMiB).toBeLessThan(150);
    expectInputError(await runCli(['up', 'agg', '--dry-run', '--set', 'workers.-1.role=decode'], h.env), /workers is a list; "-1" is not an index/);
  });

  it('a 200 MB recipe: refused by its size before it is read (was an abort at 4.3 GB)', async () => {
    const h = home();
    const p = join(h.dir, 'huge.yaml');
    writeFileSync(p, minimal);
    truncateSync(p, 200 * 1024 * 1024);
    const r = await runCliMeasured(['up', p, '--dry-run'], h.env);
    expectInputError(r, new RegExp(`^dynamo-dev: ${p}: 200\\.0 MiB is too large for a recipe \\(at most 1 MiB\\)$`));
    expect(r.maxRssMiB).toBeLessThan(150);
    expectInputError(await runCli(['up', '/dev/zero', '--dry-run'], h.env), /^dynamo-dev: \/dev\/zero: is not a regular file/);
  });

  it('a port fetch refuses (6000): exit 2 at once naming the field and a port that works, nothing started (was: ready never seen, "(bad port)" after the whole deadline)', async () => {
    const h = home();
    const env = fakeEnv(h, { gpu: 'laptop-570', python: true });
    const r = await runCli(['up', 'agg', '--no-preflight', '--set', 'frontend.httpPort=6000'], env);
    // up's header line comes first (the recipe, the release, the interpreter), then the one line of the error.
    expect(r.stdout.trimEnd().split('\n')).toEqual([expect.stringMatching(/^up agg · /)]);
    expectInputError({ ...r, stdout: '' }, /^dynamo-dev: agg: frontend\.httpPort: port 6000 is one fetch refuses to connect to \(the WHATWG "bad ports", refused by Node and browsers alike\), so dynamo-dev could never see frontend ready; set frontend\.httpPort to another, e\.g\. 6001$/);
    expect(existsSync(join(h.stateDir, 'runs'))).toBe(false);
  });

  it('ports counted up through replicas stay <= 65535 (system ports <= 32767, a signed 16-bit number for Dynamo)', async () => {
    const h = home();
    const r = await runCli(['up', 'agg-router', '--dry-run', '--set', 'ports.kvEvents=65535'], h.env);
    expectInputError(r, /^dynamo-dev: agg-router: ports\.kvEvents: 2 workers count up from 65535 to 65536 \(agg-1\), past the last port 65535; set ports\.kvEvents to at most 65534$/);
    expect((await runCli(['up', 'agg-router', '--dry-run', '--set', 'ports.kvEvents=65534'], h.env)).code).toBe(0);
    const sys = await runCli(['up', 'agg-router', '--dry-run', '--set', 'ports.system=32767'], h.env);
    expectInputError(sys, /^dynamo-dev: agg-router: ports\.system: 2 workers take system ports 32767-32768, past 32767; Dynamo reads DYN_SYSTEM_PORT as a signed 16-bit number, so set ports\.system to at most 32766$/);
    expect((await runCli(['up', 'agg-router', '--dry-run', '--set', 'ports.system=32766'], h.env)).code).toBe(0);
  });

  it('NUL and control characters in --set values, env keys with "=", bad model ids: exit 2 naming the field', async () => {
    const h = home();
    expectInputError(await runCli(['up', 'agg', '--dry-run', '--set', 'env.X=a\u0001b'], h.env), /contains a control character/);
    expectInputError(await runCli(['up', 'agg', '--dry-run', '--set', 'env.A B=C'], h.env), /^dynamo-dev: agg \(built-in\): env: "A B" is not an environment variable name/);
    const eq = recipe(h, 'eq.yaml', `${minimal}env: {"X=$(id)": 1}\n`);
    expectInputError(await runCli(['up', eq, '--dry-run'], h.env), /env: "X=\$\(id\)" is not an environment variable name/);
    expectInputError(await runCli(['up', 'agg', '--dry-run', '--model', '-x'], h.env), /model: must not start with "-"/);
    const nul = recipe(h, 'nul.yaml', `${minimal}    args: ["a\\0b"]\n`);
    expectInputError(await runCli(['up', nul, '--dry-run'], h.env), /workers\.0\.args\.0: must be an argument without control characters .*\(got "a\\u0000b"\)/);
  });

  it('kv: config values that are 0, negative or 1e308 are input errors naming the field (was -114,688 bytes/token)', async () => {
    const h = home();
    const base = JSON.parse(readFileSync(join(FIXTURES, 'configs', 'Qwen3-0.6B.config.json'), 'utf8')) as Record<string, unknown>;
    for (const [field, value] of [['num_key_value_heads', -8], ['head_dim', 0], ['num_hidden_layers', 1e308], ['num_key_value_heads', 2.5], ['head_dim', '128']] as const) {
      const p = join(h.dir, `${field}.json`);
      writeFileSync(p, JSON.stringify({ ...base, [field]: value }));
      const r = await runCli(['kv', p], h.env);
      expectInputError(r, new RegExp(`^dynamo-dev: ${p}: field "${field}" is ${JSON.stringify(value).replace(/[.+]/g, '\\$&')}; expected a whole number from 1 to 16777216$`));
    }
    expectInputError(await runCli(['kv', '/dev/zero'], h.env), /^dynamo-dev: \/dev\/zero: not a regular file/);
    const ok = join(h.dir, 'ok.json');
    copyFileSync(join(FIXTURES, 'configs', 'Qwen3-0.6B.config.json'), ok);
    const good = await runCli(['kv', ok], h.env);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('114,688');
  });

  it('a privileged port as non-root is "needs root", not "in use"', async () => {
    assertRoot();
    // A port below the unprivileged range on which nothing listens (root can bind it, so it is free).
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
    expect(start, 'this machine lets everyone bind low ports: the case cannot occur').toBeGreaterThan(80);
    let port = 0;
    for (const p of [80, 81, 88, 443, 444, 999]) {
      if (p < start && await bindable(p)) {
        port = p;
        break;
      }
    }
    expect(port).toBeGreaterThan(0);
    const o = otherHome();
    homes.push(o);
    const p = join(o.dir, 'low.yaml');
    writeFileSync(p, `${minimal}frontend: {httpPort: ${port}}\n`);
    const env = { PATH: process.env.PATH, HOME: o.dir, DYNAMO_DEV_HOME: o.stateDir, NO_COLOR: '1' };
    const r = await runCliAs(OTHER_UID, ['doctor', '--only', 'ports.free', '--recipe', p, '--json'], env);
    expect(r.code, r.stderr).toBe(1);
    const check = (JSON.parse(r.stdout) as { checks: { status: string; summary: string; fix: string }[] }).checks[0];
    expect(check.status).toBe('fail');
    expect(check.summary).toBe(`port ${port} (frontend.http) needs root: ports below 1024 are privileged and nothing listens there`);
    expect(check.summary).not.toContain('in use');
    expect(check.fix).toBe('use a port from 1024 up, e.g. --set frontend.httpPort=8000');
  });
});

describe('cause 11: flags', () => {
  it('an empty value for a flag that takes one is exit 2, not a changed meaning', async () => {
    const h = home();
    for (const args of [
      ['teardown', '--grace', ''], ['teardown', '--run', ''], ['teardown', '--run='], ['status', '--run', ''], ['doctor', '--only', ''],
      ['doctor', '--skip', ','], ['--state-dir', '', 'status'], ['logs', ''], ['up', 'agg', '--dry-run', '--set', ''], ['up', '', '--dry-run'],
      ['probe', '--url', ''], ['probe', '--prefixes', ' '], ['kv', ''], ['doctor', '--recipe', ''], ['--python', '', 'doctor'],
    ]) {
      const r = await runCli(args, h.env);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr, args.join(' ')).toMatch(/needs a value|is empty|is invalid|must be a/);
    }
  });

  it('a time no timer can hold (past 2^31-1 ms) is refused, not turned into "at once"', async () => {
    const h = home();
    for (const [args, msg] of [
      [['probe', '--url', 'http://127.0.0.1:9', '--timeout', '3000000'], /--timeout must be a number from 1 to 2147483 \(see: dynamo-dev probe --help\)$/m],
      [['doctor', '--timeout', '3000000000'], /--timeout must be a whole number from 1 to 2147483647 \(see: dynamo-dev doctor --help\)$/m],
      [['teardown', '--grace', '1e12'], /--grace must be a number from 0 to 2147483 \(see: dynamo-dev teardown --help\)$/m],
      [['up', 'agg', '--dry-run', '--ready-timeout', '1e12'], /--ready-timeout must be a number from 0 to 2147483 \(see: dynamo-dev up --help\)$/m],
    ] as const) {
      const r = await runCli([...args], h.env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
  });

  it('dynamo-dev alone prints help on stderr and exits 2; --help and help exit 0', async () => {
    const h = home();
    const r = await runCli([], h.env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Usage: dynamo-dev \[options\] \[command\]/);
    expect((await runCli(['--help'], h.env)).code).toBe(0);
    expect((await runCli(['help'], h.env)).code).toBe(0);
  });

  it('conflicting flags are refused, nothing printed on stdout', async () => {
    const h = home();
    expectInputError(await runCli(['up', 'agg', '--dry-run', '--script'], h.env), /^dynamo-dev: --dry-run and --script cannot be used together: --dry-run prints the plan, --script a bash script; choose one$/);
    expectInputError(await runCli(['up', 'agg', '--script', '--json'], h.env), /--script and --json cannot be used together/);
    expectInputError(await runCli(['up', 'agg', '--dry-run', '--detach'], h.env), /--detach and --dry-run cannot be used together/);
    expectInputError(await runCli(['status', '--run', 'x', '--all'], h.env), /--run and --all cannot be used together/);
    expectInputError(await runCli(['doctor', '--only', 'gpu.driver', '--skip', 'hf.locks'], h.env), /--only and --skip cannot be used together/);
  });

  it('a control character in any argument is exit 2 before anything runs', async () => {
    const h = home();
    expectInputError(await runCli(['logs', 'agg-0\u001b[2J'], h.env), /^dynamo-dev: argument "agg-0\\u001b\[2J" contains a control character/);
    expectInputError(await runCli(['status', '--run', 'a\nb'], h.env), /contains a control character/);
  });

  it('probe: --prefixes and --prefix-tokens are bounded before any prompt is built', async () => {
    const h = home();
    const r = await runCliMeasured(['probe', '--url', 'http://127.0.0.1:9', '--prefixes', '10000000'], h.env);
    expectInputError(r, /^dynamo-dev: --prefixes: 10000000 is more than 1,000 prefixes; use 1,000 or fewer$/);
    expect(r.maxRssMiB).toBeLessThan(150);
    expectInputError(await runCli(['probe', '--url', 'http://127.0.0.1:9', '--prefix-tokens', '1000000'], h.env), /--prefix-tokens: 1000000 is more than 131,072 tokens/);
    expectInputError(await runCli(['probe', '--url', 'http://127.0.0.1:9', '--prefixes', '1000', '--prefix-tokens', '100000'], h.env), /--prefixes 1000 x --prefix-tokens 100000 = 100,000,000 tokens of prompts; at most 4,194,304/);
    expectInputError(await runCli(['probe', '--url', 'http://127.0.0.1:9', '--repeats', '1e9'], h.env), /--repeats: 1000000000 is more than 100/);
  });
});
