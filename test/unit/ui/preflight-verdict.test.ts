import { describe, expect, it } from 'vitest';
import { formatPreflightFailures } from '../../../src/ui/up-report.js';
import { visibleLength } from '../../../src/ui/fit.js';

// The verdict under a failed preflight, read at 80 columns: whole words on every line, so the flag
// it names (--no-preflight) is never cut in two by the terminal.
const failed = {
  event: 'preflight' as const,
  ok: false,
  checks: [{ id: 'procs.leftover', title: 'No leftover engine processes', status: 'fail' as const, summary: '1 leftover process outside any live run (pid 42)', details: [], fix: 'dynamo-dev teardown --orphans' }],
};

describe('the preflight verdict', () => {
  it('at 80 columns: every line fits and the flag to skip it stays whole', () => {
    const lines = formatPreflightFailures(failed, 80).trimEnd().split('\n');
    for (const l of lines) expect(visibleLength(l), l).toBeLessThanOrEqual(80);
    const verdict = lines.slice(lines.findIndex((l) => l.includes('✗ preflight failed')));
    expect(verdict.length).toBeGreaterThan(1);
    // Broken only between words: rejoined, it reads as the one sentence.
    expect(verdict.map((l) => l.replace(/\u001b\[[0-9;]*m/g, '').trim()).join(' '))
      .toBe('✗ preflight failed: 1 check(s) would stop the start; nothing was started (skip with --no-preflight)');
  });

  it('wide: one line', () => {
    const out = formatPreflightFailures(failed, 200);
    expect(out.trimEnd().split('\n').at(-1)).toContain('✗ preflight failed: 1 check(s) would stop the start; nothing was started (skip with --no-preflight)');
  });
});
