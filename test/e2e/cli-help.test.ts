import { afterAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';

const h = tempHome('dd-help-');
const env = fakeEnv(h);
afterAll(() => h.cleanup()); // 148 dd-help-* folders were left in /tmp before

describe('--help and usage errors', () => {
  it.each(['doctor', 'up', 'teardown', 'restart', 'status', 'logs', 'diagnose', 'kv', 'probe', 'bench', 'recipes', 'export', 'export k8s'])('%s --help has examples that start with the command and a docs path that exists', async (cmd) => {
    const r = await runCli([...cmd.split(' '), '--help'], env);
    expect(r.code).toBe(0);
    const ex = r.stdout.slice(r.stdout.indexOf('Examples:'));
    expect(ex).toMatch(/^Examples:\n/);
    const commands = ex.split('\n').filter((l) => l.startsWith('  dynamo-dev '));
    expect(commands.length).toBeGreaterThanOrEqual(2);
    for (const c of commands) expect(c.trim().split(' ').slice(1, 1 + cmd.split(' ').length).join(' ')).toBe(cmd);
    const docs = /^Docs: (\S+)$/m.exec(r.stdout)![1];
    expect(existsSync(docs)).toBe(true);
  });

  it('the top-level help ends with examples and the docs folder', async () => {
    const r = await runCli(['--help'], env);
    expect(r.stdout).toContain('dynamo-dev up agg-router --detach');
    expect(r.stdout).toMatch(/Docs: \S+docs\n$/);
  });

  it.each([
    [['up', '--bogus'], /^dynamo-dev up: unknown option '--bogus' \(see: dynamo-dev up --help\)$/],
    [['nosuch'], /^dynamo-dev: unknown command 'nosuch' \(see: dynamo-dev --help\)$/],
    [['kv'], /^dynamo-dev kv: missing required argument 'model-or-config' \(see: dynamo-dev kv --help\)$/],
    [['up', '--grace', 'x'], /^dynamo-dev up: option '--grace <seconds>' argument 'x' is invalid\. --grace must be a number from 0 to 2147483 \(see: dynamo-dev up --help\)$/],
    [['recipes', 'show'], /^dynamo-dev recipes show: missing required argument 'name' \(see: dynamo-dev recipes show --help\)$/],
  ])('%j: one line in the tool\'s style, exit 2', async (args, re) => {
    const r = await runCli(args as string[], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(re);
    expect(r.stdout).toBe('');
  });
});
