import { describe, expect, it } from 'vitest';
import { MAX_TEXT, Scanner, matchLine, scanText } from '../../../src/diagnose/scanner.js';
import { SIGNATURES } from '../../../src/diagnose/signatures.js';

// How findings are counted, quoted and folded per file: what a user reads in `diagnose` and in
// doctor's logs.errors for one log.

const codes = (text: string) => scanText('w.log', text).findings.map((f) => f.code);

describe('what a finding quotes', () => {
  it('a matched line of exactly the limit is quoted whole; one character more is cut with an ellipsis', () => {
    const exact = `Address already in use ${'x'.repeat(MAX_TEXT - 'Address already in use '.length)}`;
    expect(exact.length).toBe(MAX_TEXT);
    expect(scanText('a.log', exact).findings[0].text).toBe(exact);
    const longer = `${exact}y`;
    const quoted = scanText('a.log', longer).findings[0].text;
    expect(quoted).toBe(`${longer.slice(0, MAX_TEXT - 1)}…`);
    expect(quoted.length).toBe(MAX_TEXT);
  });

  it('the quoted line carries no trailing blanks', () => {
    expect(scanText('a.log', 'OSError: [Errno 98] Address already in use   \t').findings[0].text).toBe('OSError: [Errno 98] Address already in use');
  });

  it('line numbers count from 1; a file ending in a newline has as many lines as newlines', () => {
    const r = scanText('a.log', 'INFO starting\nOSError: [Errno 98] Address already in use\n');
    expect(r.findings[0].line).toBe(2);
    expect(r.lines).toEqual({ 'a.log': 2 });
    expect(scanText('b.log', 'INFO one\nINFO two').lines).toEqual({ 'b.log': 2 });
    expect(scanText('c.log', '').lines).toEqual({ 'c.log': 0 });
  });
});

describe('the KV size of a file', () => {
  it('an exception that quotes a KV size is not the worker\'s KV cache', () => {
    const r = scanText('w.log', 'AssertionError: expected GPU KV cache size: 4,096 tokens, got 0');
    expect(r.findings.map((f) => f.code)).toEqual(['python.exception']);
    expect(r.kvTokens).toEqual({ 'w.log': null });
  });

  it('a KV line that holds no number does not erase the size logged before it', () => {
    const s = new Scanner();
    s.feed('w.log', 1, 'INFO GPU KV cache size: 14,816 tokens');
    s.feed('w.log', 2, 'INFO GPU KV cache size: , tokens');
    expect(s.result().kvTokens).toEqual({ 'w.log': 14816 });
  });
});

describe('folding consequences into causes', () => {
  it('a warning next to an unknown exception does not hide the exception', () => {
    expect(codes("Still waiting to acquire lock on /x.lock\nKeyError: 'model_type'\n")).toEqual(['python.exception', 'hf.lock-wait']);
  });

  it('a warning next to "engine core initialization failed" does not fold it', () => {
    expect(codes('UCX CUDA support was not found!\nRuntimeError: Engine core initialization failed. See root cause above.\n'))
      .toEqual(['vllm.engine-failed', 'ucx.no-cuda']);
  });

  it('an unknown exception explains EngineDeadError, and a known cause explains both', () => {
    expect(codes("KeyError: 'model_type'\nvllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.\n"))
      .toEqual(['python.exception']);
    expect(codes('OSError: [Errno 98] Address already in use\nValueError: x\nRuntimeError: Engine core initialization failed.\n'))
      .toEqual(['net.port-in-use']);
  });

  it('"destination unreachable" folds into a missing active-message transport, and is reported alone', () => {
    expect(codes('UCX  ERROR no active messages transport to <no debug data>\nUCX  ERROR Destination is unreachable\n')).toEqual(['ucx.no-am-transport']);
    expect(codes('UCX  ERROR Destination is unreachable\n')).toEqual(['ucx.unreachable']);
  });

  it('folding is per file: a cause in one log does not hide a consequence in another', () => {
    const s = new Scanner();
    s.feed('a.log', 1, 'OSError: [Errno 98] Address already in use');
    s.feed('b.log', 1, 'RuntimeError: Engine core initialization failed. See root cause above.');
    expect(s.result().findings.map((f) => [f.code, f.file])).toEqual([['net.port-in-use', 'a.log'], ['vllm.engine-failed', 'b.log']]);
  });

  it('each file lists its findings errors first, then warnings, then info, in table order', () => {
    const r = scanText('w.log', [
      'INFO GPU KV cache size: 9,152 tokens',
      'Still waiting to acquire lock on /x.lock',
      'OSError: [Errno 98] Address already in use',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.',
    ].join('\n'));
    expect(r.byFile!['w.log'].map((f) => f.code)).toEqual(['cuda.oom', 'net.port-in-use', 'hf.lock-wait', 'vllm.kv-size']);
  });
});

describe('the prefilter', () => {
  it('only literal needles in the raw line count: a colour code inside a phrase hides it (docs/diagnose.md)', () => {
    const split = 'bind: Address \x1b[1malready\x1b[0m in use';
    expect(matchLine(split)).toBeNull();
    expect(scanText('w.log', split).findings).toEqual([]);
    expect(matchLine('OSError: [Errno 98] \x1b[1mAddress already in use\x1b[0m')?.signature.code).toBe('net.port-in-use');
  });

  it('a colour code that hides a needle from the raw line does not hide the signature it belongs to once the line is clean', () => {
    // The raw line holds "Error: " (python.exception) only; the clean text also holds "Address
    // already in use", whose signature comes first in the table and is the one reported.
    const line = 'OSError: [Errno 98] \x1b[1mAddress already\x1b[0m in use';
    expect(matchLine(line)?.signature.code).toBe('net.port-in-use');
    expect(codes(line)).toEqual(['net.port-in-use']);
  });
});
