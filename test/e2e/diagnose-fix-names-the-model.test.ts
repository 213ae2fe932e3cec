import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, SAMPLES, tempHome } from '../helpers/cli.js';

let home: ReturnType<typeof tempHome>;
let env: Record<string, string | undefined>;
beforeEach(() => {
  home = tempHome('dd-e2e-diagnose-model-');
  env = fakeEnv(home);
});
afterEach(() => home.cleanup());

describe('dynamo-dev diagnose: a fix names the model the log names', () => {
  it('a download lock wait: `hf download Qwen/Qwen3-0.6B`, in --json and in the report', async () => {
    const log = join(SAMPLES, 'logs', 'worker-lock-wait.log');
    const json = await runCli(['diagnose', '--json', log], env);
    const f = JSON.parse(json.stdout).findings.find((x: { code: string }) => x.code === 'hf.lock-wait');
    expect(f.fix).toContain('`hf download Qwen/Qwen3-0.6B`');
    const text = await runCli(['diagnose', log], env);
    expect(text.stdout).toContain('`hf download Qwen/Qwen3-0.6B`');
    expect(text.stdout).not.toContain('MODEL');
  });
});
