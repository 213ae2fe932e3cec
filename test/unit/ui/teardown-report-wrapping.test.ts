import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { formatStopLine, formatVerdict } from '../../../src/ui/teardown-report.js';
import { visibleLength } from '../../../src/ui/fit.js';
import type { TeardownOutcome, TeardownResult } from '../../../src/run/teardown.js';

// teardown's per-process lines and verdict on a terminal of 40, 80 and 120 columns: each wraps
// under the process name instead of the terminal cutting words, a path or the ps command to copy
// stays whole, and piped (no width) the text is byte for byte what it was before wrapping existed.

chalk.level = 0;

const LOG = '/home/someone/.local/state/dynamo-dev/runs/20261202-031500-agg-router/logs/agg-1.log';
const leaderGone: TeardownResult = { name: 'agg-0', pid: 48213, signal: 'SIGTERM', ms: 240, run: 'r', note: 'leader had already exited; its group had not' };
const stubborn: TeardownResult = { name: 'agg-1', pid: 48299, signal: 'SIGKILL', ms: 10_040, run: 'r' };
const orphan: TeardownResult = { name: 'VLLM::EngineCore', pid: 51002, signal: 'SIGTERM', ms: 31, run: null, note: 'found by its run marker' };

/** teardown's outcome with these processes still alive after SIGKILL. */
const survivors = (remaining: { name: string; pid: number; cmd: string }[]): TeardownOutcome =>
  ({ stopped: [], remaining: remaining.map((r) => ({ ...r, run: 'r' })), runs: ['r'], notRunning: [], orphans: 0, warnings: [] });

/** The text as one line per logical line: continuations joined back with one space. */
const words = (s: string) => s.split(/\s+/).filter(Boolean);

describe('piped: every line as before, one line each', () => {
  it('a row with a note, a row with its ignored-SIGTERM line, an orphan', () => {
    expect(formatStopLine(leaderGone, 12)).toBe('  ✓ agg-0         pid 48213   SIGTERM     240 ms  leader had already exited; its group had not\n');
    expect(formatStopLine(stubborn, 12, LOG)).toBe(`  ✓ agg-1         pid 48299   SIGKILL     10.0 s\n    agg-1 ignored SIGTERM; its log: ${LOG}\n`);
    expect(formatStopLine(orphan, 12)).toBe('  ✓ VLLM::EngineCore  pid 51002   SIGTERM      31 ms (orphan)  found by its run marker\n');
  });

  it('the verdict with survivors: the ps command on the fix line', () => {
    const o = survivors([{ name: 'agg-0', pid: 48213, cmd: 'python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --gpu-memory-utilization 0.38' }]);
    expect(formatVerdict(o, 12_000, ['/logs'])).toBe([
      '1 process(es) remain:',
      '  ✗ pid 48213 (agg-0) python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --gpu-memory-utilization 0.38',
      'fix: check them with: ps -o pid,stat,args -p 48213  (state D = stuck in the kernel, e.g. a GPU driver call)',
      'logs kept: /logs',
      '',
    ].join('\n'));
  });
});

describe.each([40, 80, 120])('on a terminal of %i columns', (width) => {
  it('a row whose note does not fit wraps under the name, every word kept in order', () => {
    const out = formatStopLine(leaderGone, 12, undefined, width);
    const lines = out.replace(/\n$/, '').split('\n');
    for (const l of lines) expect(visibleLength(l), l).toBeLessThanOrEqual(width);
    for (const l of lines.slice(1)) expect(l).toMatch(/^ {6}\S/);
    expect(words(out)).toEqual(words(formatStopLine(leaderGone, 12)));
    // The row's columns before the note stay aligned on its first line.
    expect(lines[0].startsWith('  ✓ agg-0         pid 48213   SIGTERM')).toBe(true);
    // What fits is left alone: at 120 the row is one line, exactly as piped.
    if (width === 120) expect(out).toBe(formatStopLine(leaderGone, 12));
  });

  it('the ignored-SIGTERM line keeps the log path whole (alone at column 0 when it cannot fit beside the gutter)', () => {
    const lines = formatStopLine(stubborn, 12, LOG, width).replace(/\n$/, '').split('\n');
    expect(lines.filter((l) => l.trim() === LOG || l.endsWith(` ${LOG}`))).toHaveLength(1);
    const pathLine = lines.find((l) => l.includes(LOG))!;
    if (width - 6 < LOG.length) expect(pathLine).toBe(LOG);
    for (const l of lines.filter((x) => x !== LOG)) expect(visibleLength(l), l).toBeLessThanOrEqual(width);
    expect(words(lines.join('\n'))).toEqual(words(formatStopLine(stubborn, 12, LOG)));
  });

  it('the fix line keeps the ps command on one line, whole, and wraps the rest under the text after fix:', () => {
    const pids = [48213, 48299, 48300, 48301];
    const o = survivors(pids.map((pid) => ({ name: 'agg-0', pid, cmd: 'python3 -m dynamo.vllm' })));
    const lines = formatVerdict(o, 1000, [], width).replace(/\n$/, '').split('\n');
    const ps = `ps -o pid,stat,args -p ${pids.join(',')}`;
    expect(lines.filter((l) => l.includes(ps))).toHaveLength(1);
    for (const l of lines.filter((x) => x !== ps)) expect(visibleLength(l), l).toBeLessThanOrEqual(width);
    const fix = lines.slice(lines.findIndex((l) => l.startsWith('fix:')));
    for (const l of fix.slice(1).filter((x) => x !== ps)) expect(l).toMatch(/^ {5}\S/);
    expect(words(fix.join(' '))).toEqual(words(`fix: check them with: ${ps}  (state D = stuck in the kernel, e.g. a GPU driver call)`));
  });
});
