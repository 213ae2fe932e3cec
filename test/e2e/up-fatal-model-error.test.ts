import { afterEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { upHarness } from '../helpers/up-run.js';

// A truncated tokenizer.json: the real 1.6.1 frontend logs "Model materialization failed ...
// tokenizer.json: EOF while parsing" within a second and retries forever (the fake frontend's
// bad-tokenizer scenario prints that line). up used to wait the whole --ready-timeout, then blame
// agg-0; it fails at once, naming the frontend and the file.

const up = upHarness('dd-up-model-error-');
afterEach(() => up.cleanup());

it('up fails within seconds of the line (not at --ready-timeout 120), naming the frontend and tokenizer.json, exit 1, nothing left running', async () => {
  const s = await up.setup({ FAKE_FRONTEND_SCENARIO: 'bad-tokenizer' });
  const t0 = Date.now();
  const r = await runCli(['up', 'agg-router', '--no-preflight', '--ready-timeout', '120', ...s.sets], s.env, { timeoutMs: 90_000 });
  expect(r.code, r.stdout + r.stderr).toBe(1);
  // Far below the 120 s deadline (the line comes at the first registration; the bound is the deadline's half).
  expect(Date.now() - t0).toBeLessThan(60_000);
  expect(r.stdout + r.stderr).toMatch(/frontend cannot load the model: tokenizer: \S+\/tokenizer\.json: EOF while parsing a value at line 7 column 11/);
  expect(r.stdout + r.stderr).not.toMatch(/not ready after/);
  const status = JSON.parse((await runCli(['status', '--json'], s.env)).stdout);
  expect(status.runs.filter((x: { live: boolean }) => x.live)).toEqual([]);
});
