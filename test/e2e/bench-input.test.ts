import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';

// bench's bad input through the built binary: one line naming the flag, exit 2, nothing started
// (no bench folder, no run). AIPerf is the fake of test/fixtures/aiperf/bin where it must be found.
const home = tempHomes('dd-bench-in-');
const withAiperf = (h: ReturnType<typeof home>) => {
  const env = fakeEnv(h);
  return { ...env, PATH: [join(FIXTURES, 'aiperf', 'bin'), env.PATH].join(delimiter) };
};
const nothingStarted = (h: ReturnType<typeof home>) => {
  expect(existsSync(join(h.stateDir, 'bench'))).toBe(false);
  expect(existsSync(join(h.stateDir, 'runs'))).toBe(false);
};

describe('bench: bad input is one line, exit 2, nothing started', () => {
  it.each([
    [['bench', '--preset', 'nope'], 'dynamo-dev: --preset: unknown preset "nope"; valid: routing, agg-vs-disagg, frontend-overhead'],
    [['bench', 'mocker', '--vary', 'frontend.routerMod=kv,random'], 'dynamo-dev: --vary frontend.routerMod=kv,random: mocker (built-in): unknown field "frontend.routerMod"; did you mean "frontend.routerMode"?'],
    [['bench', 'mocker', '--vary', 'frontend.routerMode'], 'dynamo-dev: --vary "frontend.routerMode": expected KEY=V1,V2,... (a recipe field path and its values), e.g. --vary frontend.routerMode=kv,round-robin,random'],
    [['bench', 'mocker', '--concurrency', '0'], 'dynamo-dev: --concurrency: "0" is not a whole number from 1 to 4096 (e.g. --concurrency 1,4)'],
    // Issue 29: no upper bound before (1e9 concurrent requests, 1e12 requests, 1e8 repeats were planned).
    [['bench', 'mocker', '--concurrency', '1e9'], 'dynamo-dev: --concurrency: "1e9" is not a whole number from 1 to 4096 (e.g. --concurrency 1,4)'],
    [['bench', 'mocker', '--concurrency', Array.from({ length: 33 }, (_, i) => i + 1).join(',')], 'dynamo-dev: --concurrency: 33 levels; at most 32 (each is a load run per variant and repeat)'],
    [['bench', 'mocker', '--requests', '1e12'], "dynamo-dev bench: option '--requests <n>' argument '1e12' is invalid. --requests must be a whole number from 1 to 1000000 (see: dynamo-dev bench --help)"],
    [['bench', 'mocker', '--repeats', '1e8'], "dynamo-dev bench: option '--repeats <n>' argument '1e8' is invalid. --repeats must be a whole number from 1 to 100 (see: dynamo-dev bench --help)"],
    // Issue 29: --seed had no bound but a safe integer (2^53-1, where seed + k is no longer exact); AIPerf folds one past 2^32-1 (defaults.ts SEED_MAX).
    [['bench', 'mocker', '--seed', '4294967296'], "dynamo-dev bench: option '--seed <n>' argument '4294967296' is invalid. --seed must be a whole number from 0 to 4294967295 (see: dynamo-dev bench --help)"],
    [['bench', 'mocker', '--seed', '9007199254740991'], "dynamo-dev bench: option '--seed <n>' argument '9007199254740991' is invalid. --seed must be a whole number from 0 to 4294967295 (see: dynamo-dev bench --help)"],
    [['bench', 'mocker', '--seed', '-1'], "dynamo-dev bench: option '--seed <n>' argument '-1' is invalid. --seed must be a whole number from 0 to 4294967295 (see: dynamo-dev bench --help)"],
    [['bench', 'mocker', '--preset', 'routing'], 'dynamo-dev: give recipes or --preset, not both (a preset names its own recipes)'],
    [['bench', '--preset', 'routing', '--variants', 'kv-events,rr'], 'dynamo-dev: --variants: preset routing has no variant "rr"; its variants: kv-events, kv-approx, round-robin, random, kv-events-off'],
    [['bench', 'mocker', '--variants', 'kv-events'], 'dynamo-dev: --variants picks variants of a --preset; with recipes, name the recipes or use --vary'],
    // The field a preset's variants compare cannot be set for all of them (it would measure one router five times).
    [['bench', '--preset', 'routing', '--variants', 'kv-events,round-robin', '--set', 'frontend.routerMode=kv'], "dynamo-dev: --set frontend.routerMode: the variants differ in this field (kv-events: the recipe's, round-robin: round-robin), so it is what they compare; leave it to them, or pick variants with --variants and values with --vary"],
    [['bench', 'mocker', '--vary', 'frontend.routerMode=kv,random', '--set', 'frontend.routerMode=kv'], 'dynamo-dev: --set frontend.routerMode: the variants differ in this field (routerMode=kv: kv, routerMode=random: random), so it is what they compare; leave it to them, or pick variants with --variants and values with --vary'],
  ])('%j', async (args, line) => {
    const h = home();
    const r = await runCli(args, withAiperf(h));
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(line);
    expect(r.stdout).toBe('');
    nothingStarted(h);
  });

  it('--plot of more variants than a picture holds (66 by two --vary): refused before anything starts', async () => {
    const h = home();
    const plot = join(h.dir, 'p.svg');
    const ports = Array.from({ length: 22 }, (_, i) => 9000 + i).join(',');
    const r = await runCli(['bench', 'mocker', '--vary', 'frontend.routerMode=kv,round-robin,random', '--vary', `frontend.httpPort=${ports}`, '--plot', plot], withAiperf(h));
    expect([r.code, r.stderr]).toEqual([2, `dynamo-dev: --plot ${plot}: 66 variants; a plot draws at most 64 (its bars would be thinner than a pixel); the tables show them all without --plot`]);
    nothingStarted(h);
  });

  it('zero requests', async () => {
    const h = home();
    const r = await runCli(['bench', 'mocker', '--requests', '0'], withAiperf(h));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--requests must be a whole number from 1 to 1000000/);
    nothingStarted(h);
  });

  it('no AIPerf: says how to get it', async () => {
    const h = home();
    const r = await runCli(['bench', 'mocker', '--python', '/bin/false'], fakeEnv(h, { vars: { PATH: '/usr/bin:/bin' } }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dynamo-dev: AIPerf is not installed: no `aiperf` on PATH, no AIPerf environment from setup, and `\/bin\/false -m aiperf` has none/);
    expect(r.stderr).toMatch(/\nfix: dynamo-dev setup {3}\(installs AIPerf 0\.13\.0 in an environment of its own/);
    nothingStarted(h);
  });

  it('an aiperf on PATH whose interpreter is gone (a deleted venv): named, with the interpreter, instead of a bare ENOENT', async () => {
    const h = home();
    const bin = join(h.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'aiperf'), '#!/gone/venv/bin/python3\nimport sys\n', { mode: 0o755 });
    const r = await runCli(['bench', 'mocker', '--python', '/bin/false'], fakeEnv(h, { vars: { PATH: `${bin}:/usr/bin:/bin` } }));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`dynamo-dev: AIPerf cannot run: the aiperf on PATH (${join(bin, 'aiperf')}) cannot run: its interpreter /gone/venv/bin/python3 is missing (its environment was moved or deleted); no AIPerf environment from setup, and \`/bin/false -m aiperf\` has none\nfix: dynamo-dev setup   (installs AIPerf 0.13.0 in an environment of its own beside Dynamo's; bench finds it there), or reinstall the one on PATH`);
    nothingStarted(h);
  });

  it('neither a recipe nor a preset', async () => {
    const h = home();
    const r = await runCli(['bench'], withAiperf(h));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dynamo-dev: bench needs a recipe or --preset \(routing, agg-vs-disagg, frontend-overhead\)/);
    nothingStarted(h);
  });
});
