import { afterEach, describe, expect, it } from 'vitest';
import { BIN, fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';

// A bad input as a person sees it at 80 columns: the error wraps at words under an indent (the
// terminal cut it mid-word before), nothing reaches past column 80; piped, one whole line for scripts.

const homes: ReturnType<typeof tempHome>[] = [];
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
  for (const h of homes.splice(0)) h.cleanup();
});

const ARGS = ['up', 'agg', '--set', 'workers.0.gpuMemoryUtilization=7'];
const WHOLE = 'dynamo-dev: agg (built-in): workers.0.gpuMemoryUtilization: must be a fraction in (0, 1] or "auto" (got 7)';

describe('an input error on a terminal and piped', () => {
  it('80x24: wrapped at words, exit 2; piped: the same words on one line, exit 2', async () => {
    const h = tempHome('dd-err-term-');
    homes.push(h);
    const env = fakeEnv(h);
    const term = openTerminal([process.execPath, BIN, ...ARGS], env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(2);
    const lines = stripTerm(term.raw()).replace(/\r/g, '').split('\n').filter((l) => l !== '');
    expect(lines).toEqual([
      'dynamo-dev: agg (built-in): workers.0.gpuMemoryUtilization: must be a fraction',
      '  in (0, 1] or "auto" (got 7)',
    ]);

    const piped = await runCli(ARGS, env);
    expect(piped.code).toBe(2);
    expect(piped.stderr.trimEnd()).toBe(WHOLE);
  });
});
