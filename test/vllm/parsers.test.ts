import { describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../helpers/cli.js';
import { realParse, vllmPython } from './real.js';

// Every argv `up` plans for every built-in recipe goes through the real parsers of the pinned
// release: dynamo.vllm's (its own flags, then vLLM 0.31.0's engine args: dynamo/vllm/args.py
// _parse_cli_args) and dynamo.frontend's (dynamo/frontend/main.py parse_args). A flag the release
// removes or renames, or a value its parser refuses, fails here.

interface Plan {
  dynamo: { version: string };
  processes: { name: string; argv: string[] }[];
}

const REAL = new Set(['dynamo.vllm', 'dynamo.frontend']);

describe('the planned argv of every built-in recipe parses in the real ai-dynamo[vllm] 1.6.1', () => {
  it('up --dry-run --json of each recipe: every dynamo.vllm and dynamo.frontend argv accepted, every flag known', async () => {
    const h = tempHome('dd-vllm-');
    try {
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, DYNAMO_DEV_HOME: h.stateDir, HF_HUB_OFFLINE: '1', NO_COLOR: '1' };
      const list = await runCli(['recipes', '--json'], env);
      const recipes = (JSON.parse(list.stdout) as { recipes: { name: string }[] }).recipes.map((r) => r.name);
      expect(recipes.length).toBeGreaterThanOrEqual(5);
      const planned: { where: string; module: string; args: string[] }[] = [];
      for (const name of recipes) {
        const r = await runCli(['up', name, '--dry-run', '--json', '--python', vllmPython()], env);
        expect(r.code, r.stderr).toBe(0);
        const plan = JSON.parse(r.stdout) as Plan;
        expect(plan.dynamo.version).toBe('1.6.1');
        for (const p of plan.processes) {
          const module = p.argv[p.argv.indexOf('-m') + 1];
          if (REAL.has(module)) planned.push({ where: `${name} ${p.name}`, module, args: p.argv.slice(p.argv.indexOf('-m') + 2) });
        }
      }
      // Every recipe but the mocker's runs vLLM workers (the mocker is test:dynamo's).
      expect(planned.filter((p) => p.module === 'dynamo.vllm').length).toBeGreaterThanOrEqual(5);
      // A control: a flag no release has is refused, so the check can fail.
      const control = { where: 'control', module: 'dynamo.vllm', args: ['--model', 'm', '--no-such-flag-dynamo-dev'] };
      const answer = realParse([...planned, control]);
      const refused = planned.map((p, i) => ({ ...p, ...answer.results[i] })).filter((r) => !r.ok).map((r) => `${r.where}: ${r.error}`);
      expect(refused).toEqual([]);
      expect(answer.results.at(-1)).toMatchObject({ ok: false, error: expect.stringContaining('--no-such-flag-dynamo-dev') });
      // Every long flag of every argv is one the real parser declares (not merely tolerated).
      const unknown = planned.flatMap((p) => p.args.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0])
        .filter((f) => !answer.flags[p.module as 'dynamo.vllm'].includes(f)).map((f) => `${p.where}: ${f}`));
      expect(unknown).toEqual([]);
      expect(answer.flags['dynamo.vllm']).toEqual(expect.arrayContaining(['--disaggregation-mode', '--kv-events-config', '--kv-transfer-config', '--gpu-memory-utilization']));
    } finally {
      h.cleanup();
    }
  }, 300_000);
});
