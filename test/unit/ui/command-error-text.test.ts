import { describe, expect, it } from 'vitest';
import { fitErrorLine, formatCommandError, stderrColumns } from '../../../src/ui/error-text.js';

const MSG = 'agg (built-in): workers.0.gpuMemoryUtilization: must be a fraction in (0, 1] or "auto" (got 7)';

describe('a failed command\'s stderr text', () => {
  it('piped: the error and its fix are one whole line each, however long', () => {
    const fix = 'run it with --set workers.0.gpuMemoryUtilization=0.45 or pick a smaller model with --model Qwen/Qwen3-0.6B';
    expect(formatCommandError(MSG, fix)).toBe(`dynamo-dev: ${MSG}\nfix: ${fix}\n`);
    expect(formatCommandError(MSG, undefined)).toBe(`dynamo-dev: ${MSG}\n`);
  });

  it('at 80 columns: wraps between words under a two-space indent, never past column 80', () => {
    expect(formatCommandError(MSG, undefined, 80)).toBe(
      'dynamo-dev: agg (built-in): workers.0.gpuMemoryUtilization: must be a fraction\n  in (0, 1] or "auto" (got 7)\n',
    );
    // Exactly 80 columns stays on one line; one more wraps.
    const exact = 'x'.repeat(80 - 'dynamo-dev: '.length - 2);
    expect(formatCommandError(`${exact} y`, undefined, 80)).toBe(`dynamo-dev: ${exact} y\n`);
    expect(formatCommandError(`${exact}z y`, undefined, 80)).toBe(`dynamo-dev: ${exact}z\n  y\n`);
  });

  it('a fix keeps a flag with its value on one line, so the copied command still runs', () => {
    const fix = 'lower the share of the second worker: dynamo-dev up agg --set workers.1.gpuMemoryUtilization=0.3';
    const lines = formatCommandError('does not fit', fix, 72).trimEnd().split('\n');
    expect(lines.some((l) => l.includes('--set workers.1.gpuMemoryUtilization=0.3'))).toBe(true);
    expect(lines.every((l) => l.length <= 72)).toBe(true);
  });

  it('commander\'s line wraps the same way; the width is the terminal\'s only when stderr is one', () => {
    expect(fitErrorLine("dynamo-dev up: unknown option '--frobnicate-the-whole-thing-please' (see: dynamo-dev up --help)\n", 80))
      .toBe("dynamo-dev up: unknown option '--frobnicate-the-whole-thing-please' (see:\n  dynamo-dev up --help)\n");
    expect(stderrColumns({ isTTY: true, columns: 80 })).toBe(80);
    expect(stderrColumns({ isTTY: false, columns: 80 })).toBe(Infinity);
    expect(stderrColumns({})).toBe(Infinity);
  });
});
