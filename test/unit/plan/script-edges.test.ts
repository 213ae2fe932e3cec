import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateScript } from '../../../src/plan/script.js';
import type { Plan, PlannedProcess } from '../../../src/plan/types.js';
import { FIXTURES } from '../../helpers/cli.js';

// The rare inputs of the --script generator; the common shape is pinned whole in script-golden.test.ts.
const planOf = (name: string): Plan => JSON.parse(readFileSync(join(FIXTURES, 'scripts', `${name}.plan.json`), 'utf8')) as Plan;
const lineOf = (text: string, start: string) => text.split('\n').find((l) => l.startsWith(start));

describe('--script: rare plans', () => {
  it('a value that is the run folder itself points at the script\'s own run folder', () => {
    const plan = planOf('mocker');
    const w = plan.processes[1];
    w.env.DYN_STATE = plan.runDir;
    w.env.OTHER_RUN = `${plan.runDir}-old/logs`;
    const text = generateScript(plan);
    expect(text).toContain('  -e DYN_STATE="$RUN_DIR" \\\n');
    // A sibling folder that only starts with the same letters is not under the run folder.
    expect(text).toContain(`  -e OTHER_RUN=${plan.runDir}-old/logs \\\n`);
  });

  it('a run id stays one word whatever the plan is called', () => {
    const plan = { ...planOf('mocker'), recipe: 'my recipe (copy)' };
    expect(lineOf(generateScript(plan), 'RUN_ID=')).toBe('RUN_ID="${RUN_ID:-$(date +%Y%m%d-%H%M%S)-my-recipe-copy-}"');
  });

  it('a worker after a predecessor that has no KV line waits for the predecessor\'s /health', () => {
    const plan = planOf('agg-router');
    const [, a0, a1] = plan.processes;
    const httpOnly: PlannedProcess = { ...a0, ready: { http: 'http://127.0.0.1:8081/health' } };
    const text = generateScript({ ...plan, processes: [plan.processes[0], httpOnly, a1] });
    const start1 = text.indexOf('start agg-1 ');
    const wait = text.indexOf(`wait_http agg-0 http://127.0.0.1:8081/health -E '"status": *"ready"'`);
    expect(wait).toBeGreaterThan(text.indexOf('start agg-0 '));
    expect(wait).toBeLessThan(start1);
    expect(text).not.toContain('waiting for agg-0 to log its KV cache size');
  });

  it('a predecessor missing from the plan is not waited for', () => {
    const plan = planOf('agg-router');
    const [fe, a0, a1] = plan.processes;
    const text = generateScript({ ...plan, processes: [fe, { ...a1, waitFor: ['gone-0'] }, a0] });
    expect(text).not.toContain('gone-0');
  });
});
