import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { FIXTURES, tempHomes } from '../../helpers/cli.js';
import { benchArgv, prepareBench, type BenchInput } from '../../../src/run/bench-prepare.js';

// run/bench-prepare.ts (moved out of commands/ by issue 30, e2e-only so far): everything bench
// checks before the first variant starts. Bad input is a UserError (exit 2) naming the flag, before
// any lock is taken; a good one gives the variants, each with its recipe and tokenizer, the stored
// document's head and the first line bench says. AIPerf is the fake of test/fixtures/aiperf/bin.

const home = tempHomes('dd-bench-prepare-');
function input(o: Partial<BenchInput> = {}): BenchInput {
  const { stateDir } = home();
  const env = { PATH: [join(FIXTURES, 'aiperf', 'bin'), process.env.PATH].join(delimiter), HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python') };
  return { env, python: 'python3', stateDir, recipes: [], preflight: false, ...o };
}

describe('prepareBench refuses bad input before anything is locked', () => {
  it('recipes and --preset both; neither (with the commands that would do)', async () => {
    await expect(prepareBench(input({ recipes: ['mocker'], preset: 'routing' }))).rejects.toThrow('give recipes or --preset, not both (a preset names its own recipes)');
    const none = input();
    await expect(prepareBench(none)).rejects.toMatchObject({ message: expect.stringMatching(/^bench needs a recipe or --preset \(routing, /), fix: expect.stringContaining('dynamo-dev bench --preset routing') });
    expect(existsSync(join(none.stateDir, 'bench.lock'))).toBe(false);
  });

  it('--variants without a preset; a --vary key no recipe has, named as the flag gave it', async () => {
    await expect(prepareBench(input({ recipes: ['mocker'], variants: ['a'] }))).rejects.toThrow('--variants picks variants of a --preset; with recipes, name the recipes or use --vary');
    await expect(prepareBench(input({ recipes: ['mocker'], vary: ['frontend.routerModee=kv,random'] }))).rejects.toThrow(/^--vary frontend\.routerModee=kv,random: /);
  });
});

describe('prepareBench of good input', () => {
  it('one variant per --vary value, each recipe loaded with its override and the embedded model\'s folder as tokenizer; the head and the first line', async () => {
    const i = input({ recipes: ['mocker'], vary: ['frontend.routerMode=kv,random'], concurrency: ['1', '2'], requests: 8, repeats: 1, seed: 7 });
    const p = await prepareBench(i);
    expect(p.variants.map((v) => [v.recipeObj.frontend.routerMode, v.recipeObj.engine])).toEqual([['kv', 'mocker'], ['random', 'mocker']]);
    expect(p.variants[0].tokenizer).not.toBe('dynamo-dev/tiny');
    expect(existsSync(p.variants[0].tokenizer)).toBe(true);
    expect(p.doc).toMatchObject({ preset: null, seed: 7, requests: 8, concurrency: [1, 2], repeats: 1, machine: { engine: 'mocker', dynamo: '1.6.1', vllm: null, python: 'python3' } });
    expect(p.ranEngine).toBe('mocker');
    expect(p.header).toMatch(/^bench \S+: 2 variants, concurrency 1,2, 1 repeat of 8 requests; AIPerf /);
    expect(p.python(p.variants[1])).toBe('python3');
    // One bench at a time: its lock is held now, naming this bench.
    expect(existsSync(join(i.stateDir, 'bench.lock'))).toBe(true);
  });

  it('the user\'s --set wins over the preset\'s engine tuning (two mocker workers, not eight); the field the variants compare is refused before the lock', async () => {
    const i = input({ preset: 'routing', variants: ['kv-events', 'random'], set: ['workers.0.replicas=2'], requests: 12, repeats: 1 });
    const p = await prepareBench(i);
    expect(p.variants.map((v) => [v.name, v.recipeObj.workers[0].replicas, v.recipeObj.frontend.routerMode])).toEqual([['kv-events', 2, 'kv'], ['random', 2, 'random']]);
    const bad = input({ preset: 'routing', set: ['frontend.routerMode=kv'] });
    await expect(prepareBench(bad)).rejects.toThrow(/^--set frontend\.routerMode: the variants differ in this field \(kv-events: the recipe's, /);
    expect(existsSync(join(bad.stateDir, 'bench.lock'))).toBe(false);
  });

  it('benchArgv: the words after `bench`, global flags before it left out', () => {
    expect(benchArgv(['--state-dir', '/s', 'bench', 'agg', '--vary', 'a=1,2'])).toEqual(['agg', '--vary', 'a=1,2']);
    expect(benchArgv(['agg'])).toEqual(['agg']);
  });
});
