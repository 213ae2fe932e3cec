import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeEnv, ROOT, runCli, tempHome } from '../helpers/cli.js';

// doctor starts its Python probe before the recipe is loaded, on a guess of interpreter and engine
// read from the recipe's text; a wrong guess must never decide a verdict.

interface CheckJson { id: string; status: string; summary: string }

const homes: ReturnType<typeof tempHome>[] = [];
afterEach(() => {
  while (homes.length > 0) homes.pop()!.cleanup();
});

describe('doctor probes on the loaded recipe, whatever it guessed first', () => {
  it('a recipe whose python only YAML can read (an anchor): the interpreter the recipe names is probed, not the guess', async () => {
    const home = tempHome('dd-doctor-start-');
    homes.push(home);
    const recipe = join(home.dir, 'anchored.yaml');
    // Read as plain text, the interpreter would be "&py python3", a program that does not exist.
    writeFileSync(recipe, readFileSync(join(ROOT, 'recipes', 'agg.yaml'), 'utf8').replace('engine: vllm', 'engine: vllm\npython: &py python3'));
    const r = await runCli(['doctor', '--only', 'python.env', '--recipe', recipe, '--json'], fakeEnv(home, { python: true }));
    const [py] = (JSON.parse(r.stdout) as { checks: CheckJson[] }).checks;
    expect(py).toMatchObject({ id: 'python.env', status: 'pass' });
    expect(r.code).toBe(0);
  });

  it('an unknown recipe is an input error before any probe starts', async () => {
    const home = tempHome('dd-doctor-start-');
    homes.push(home);
    const r = await runCli(['doctor', '--recipe', 'no-such-recipe', '--json'], fakeEnv(home, { python: true, gpu: 'laptop-570' }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/unknown recipe "no-such-recipe"/);
  });
});
