import { describe, expect, it } from 'vitest';
import { PREFILTER_SOURCE, Scanner, scanText } from '../../../src/diagnose/scanner.js';
import { SIGNATURES } from '../../../src/diagnose/signatures.js';

describe('Scanner', () => {
  it('keeps per code the count and the first occurrence, and per file the last KV size', () => {
    const s = new Scanner();
    s.addFile('a.log');
    s.feed('a.log', 3, 'INFO GPU KV cache size: 9,152 tokens');
    s.feed('a.log', 9, 'INFO GPU KV cache size: 14,816 tokens');
    s.addFile('b.log');
    s.feed('b.log', 5, 'OSError: [Errno 98] Address already in use');
    s.feed('b.log', 7, 'OSError: [Errno 98] Address already in use');
    s.addFile('c.log');
    const r = s.result();
    expect(r.files).toBe(3);
    expect(r.kvTokens).toEqual({ 'a.log': 14816, 'b.log': null, 'c.log': null });
    expect(r.findings.map((f) => [f.code, f.count, f.file, f.line])).toEqual([
      ['net.port-in-use', 2, 'b.log', 5],
      ['vllm.kv-size', 2, 'a.log', 3],
    ]);
    expect(r.byFile!['b.log'].map((f) => f.code)).toEqual(['net.port-in-use']);
    expect(r.byFile!['c.log']).toEqual([]);
  });

  it('sums counts across files and keeps the first file as the first occurrence', () => {
    const s = new Scanner();
    s.feed('x.log', 2, 'Still waiting to acquire lock on /a.lock (elapsed: 10.1 seconds)');
    s.feed('y.log', 1, 'Still waiting to acquire lock on /a.lock (elapsed: 20.1 seconds)');
    const f = s.result().findings;
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ code: 'hf.lock-wait', severity: 'warn', count: 2, file: 'x.log', line: 2 });
  });

  it('drops "engine core initialization failed" when its root cause is in the same file, keeps it alone', () => {
    const both = scanText('w.log', 'RuntimeError: Error 804: forward compatibility was attempted on non supported HW\nRuntimeError: Engine core initialization failed. See root cause above.\n');
    expect(both.findings.map((f) => f.code)).toEqual(['cuda.error804']);
    const alone = scanText('w.log', 'RuntimeError: Engine core initialization failed. See root cause above.\n');
    expect(alone.findings.map((f) => f.code)).toEqual(['vllm.engine-failed']);
  });

  it('reports errors first, then warnings, then info', () => {
    const r = scanText('m.log', [
      'GPU KV cache size: 14,816 tokens',
      'Still waiting to acquire lock on /x.lock',
      'OSError: [Errno 98] Address already in use',
    ].join('\n'));
    expect(r.findings.map((f) => f.severity)).toEqual(['error', 'warn', 'info']);
  });

  it('cuts very long matched lines', () => {
    const r = scanText('l.log', `Address already in use ${'x'.repeat(5000)}`);
    expect(r.findings[0].text.length).toBeLessThanOrEqual(500);
  });

  it('builds its prefilter from every signature needle', () => {
    for (const s of SIGNATURES) for (const n of s.needles) expect(new RegExp(PREFILTER_SOURCE).test(n), n).toBe(true);
  });
});
