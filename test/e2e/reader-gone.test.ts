import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { BIN, fakeEnv, tempHomes } from '../helpers/cli.js';

// `dynamo-dev doctor | head -1`: the reader leaves after the first line. The next write failed with
// an unhandled EPIPE and a stack trace on stderr; now the command ends as it would have, quietly.
const home = tempHomes('dd-reader-gone-');

it('doctor whose stdout reader leaves after the first chunk: no EPIPE, no stack trace, its own exit code', async () => {
  const env = fakeEnv(home());
  const child = spawn(process.execPath, [BIN, 'doctor'], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  // Like `head -1`: read the first chunk, then close the pipe's read end.
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\(node:/);
  // doctor's verdict on the fake machine (0 or 1), never a crash's signal.
  expect([0, 1]).toContain(code);
});
