import { describe, expect, it } from 'vitest';
import { matchLine, scanText } from '../../../src/diagnose/scanner.js';

// More real shapes of the lines some signatures stand for, each beside the near-miss that shares
// its words (the table of signatures.test.ts holds the main cases).
const code = (line: string) => matchLine(line)?.signature.code ?? null;

describe('more lines', () => {
  it('cuda.oom: PyTorch\'s allocator limit, which says "out of memory" without "CUDA"', () => {
    expect(code('torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)')).toBe('cuda.oom');
    expect(code('INFO 10-07 05:12:18 [worker.py:88] memory fraction allowed: 0.38')).toBeNull();
  });

  it('python.missing-module: the interpreter of a versioned venv; the same words inside a sentence are no crash', () => {
    expect(code('/opt/venv/bin/python3.12: No module named dynamo')).toBe('python.missing-module');
    expect(code('hint: /usr/bin/python3: No module named dynamo means the venv is not active')).toBeNull();
  });

  it('the generic exception quotes its last line without the blanks after it', () => {
    const r = scanText('w.log', "KeyError: 'x'   \nValueError: y \t\n");
    expect(r.findings.map((f) => [f.code, f.line, f.text])).toEqual([['python.exception', 2, 'ValueError: y']]);
    const first = scanText('w.log', "KeyError: 'x'   \n");
    expect(first.findings[0].text).toBe("KeyError: 'x'");
  });
});
