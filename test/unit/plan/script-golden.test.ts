import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateScript, type ScriptOptions } from '../../../src/plan/script.js';
import type { Plan } from '../../../src/plan/types.js';
import { FIXTURES } from '../../helpers/cli.js';

// `up --script` writes a program the user keeps, reads and edits: its whole text is the product.
// The scripts in test/fixtures/scripts/ (agg-router whole, the others without the shared helpers) were read line by line once (agg-router's also runs for real
// in the e2e test up-script.test.ts); a change to the generator shows up here as a diff to review.
// The plans beside them are buildPlan's output for the built-in recipes at 1.6.1, kept as data so a
// change of the plan (build.ts) does not churn these scripts. After a deliberate change of the
// generator: UPDATE_SCRIPTS=1 npx vitest run test/unit/plan/script-golden.test.ts, then read the diff.
const DIR = join(FIXTURES, 'scripts');
const planOf = (name: string): Plan => JSON.parse(readFileSync(join(DIR, `${name}.plan.json`), 'utf8')) as Plan;

/**
 * The script as a head (variables), the helper functions every script shares, and the body (the
 * processes, readiness, supervision). Only agg-router's fixture holds the helpers; the others hold
 * head and body, and their helpers must equal agg-router's.
 */
function parts(text: string): { helpers: string; rest: string } {
  const from = text.indexOf('GROUPS_STARTED=()\n');
  const to = text.indexOf('\n# frontend (');
  expect(from).toBeGreaterThan(0);
  expect(to).toBeGreaterThan(from);
  return { helpers: text.slice(from, to), rest: `${text.slice(0, from)}[helpers as in agg-router.sh]\n${text.slice(to)}` };
}

function expectScript(name: string, o?: ScriptOptions): void {
  const text = generateScript(planOf(name), o);
  const whole = name === 'agg-router';
  const path = join(DIR, whole ? `${name}.sh` : `${name}.body.sh`);
  const expected = whole ? text : parts(text).rest;
  if (process.env.UPDATE_SCRIPTS === '1') writeFileSync(path, expected);
  expect(expected).toBe(readFileSync(path, 'utf8'));
  if (!whole) expect(parts(text).helpers).toBe(parts(readFileSync(join(DIR, 'agg-router.sh'), 'utf8')).helpers);
}

describe('up --script: the whole script', () => {
  it('agg-router: two workers one after another, KV events on their own ports, ready through the frontend', () => {
    expectScript('agg-router');
  });

  it('disagg-same-gpu: decode then prefill, NIXL side channels, --ready-timeout and --grace as the defaults', () => {
    expectScript('disagg-same-gpu', { readyTimeoutS: 120, graceS: 3 });
  });

  it('mocker: no GPU fraction, no KV line to wait for, workers start together', () => {
    expectScript('mocker');
  });
});
