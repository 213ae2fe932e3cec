import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../helpers/cli.js';
import { realParse } from './real.js';

// The fakes of test/fixtures/python accept only what the real parsers of 1.6.1 accept: the list
// they refuse unknown flags by (real_flags_1.6.1.json) is the real parsers' list, and every flag a
// fake models is one the real parser declares, except those older releases had (FACTS section 4).

const LIST = join(FIXTURES, 'python', 'real_flags_1.6.1.json');
/** Flags of releases before 1.6 the fakes keep so plans for those releases run: absent from 1.6.1. */
const OLDER = { 'dynamo.vllm': ['--is-prefill-worker', '--is-decode-worker'], 'dynamo.frontend': ['--store-kv'] };

/** The long flags a fake's own parser declares. */
function fakeFlags(module: 'dynamo.vllm' | 'dynamo.frontend'): string[] {
  const code = module === 'dynamo.vllm'
    ? 'from fake_dynamo_worker import build_parser; p = build_parser("vllm")'
    : 'import importlib; p = importlib.import_module("dynamo.frontend.__main__").build_parser()';
  const out = execFileSync('python3', ['-c', `${code}\nimport json; print(json.dumps(sorted({s for a in p._actions for s in a.option_strings if s.startswith("--")})))`], {
    encoding: 'utf8', env: { PATH: process.env.PATH, PYTHONPATH: join(FIXTURES, 'python'), PYTHONDONTWRITEBYTECODE: '1' },
  });
  return JSON.parse(out) as string[];
}

describe('the fakes accept only the flags the real 1.6.1 parsers accept', () => {
  it('real_flags_1.6.1.json is the real parsers\' list; every flag a fake models is in it (or an older release\'s); an unknown flag is refused by both', () => {
    const real = realParse([{ module: 'dynamo.vllm', args: ['--model', 'm', '--no-such-flag-dynamo-dev'] }]);
    const committed = JSON.parse(readFileSync(LIST, 'utf8')) as Record<string, string[]>;
    expect(committed['dynamo.vllm']).toEqual(real.flags['dynamo.vllm']);
    expect(committed['dynamo.frontend']).toEqual(real.flags['dynamo.frontend']);
    for (const module of ['dynamo.vllm', 'dynamo.frontend'] as const) {
      const older = OLDER[module];
      expect(fakeFlags(module).filter((f) => f !== '--help' && !real.flags[module].includes(f) && !older.includes(f)), module).toEqual([]);
      for (const f of older) expect(real.flags[module], `${module} ${f} is back in 1.6.1`).not.toContain(f);
    }
    // Refused the same way: argparse's "unrecognized arguments", exit 2.
    expect(real.results[0]).toMatchObject({ ok: false, error: expect.stringContaining('unrecognized arguments: --no-such-flag-dynamo-dev') });
    const fake = spawnSync('python3', ['-m', 'dynamo.vllm', '--model', 'm', '--no-such-flag-dynamo-dev'], {
      encoding: 'utf8', env: { PATH: process.env.PATH, PYTHONPATH: join(FIXTURES, 'python'), PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(fake.status).toBe(2);
    expect(fake.stderr).toContain('unrecognized arguments: --no-such-flag-dynamo-dev');
  }, 120_000);
});
