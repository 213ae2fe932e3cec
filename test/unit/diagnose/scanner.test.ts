import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SAMPLES } from '../../helpers/cli.js';
import { Scanner, scanText } from '../../../src/diagnose/scanner.js';
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

  const log = (name: string) => readFileSync(join(SAMPLES, 'logs', name), 'utf8');

  it('an engine core crash of a known kind: the cause alone; EngineDeadError and the generic exception fold into it', () => {
    const r = scanText('w.log', log('worker-engine-illegal-address.log'));
    expect(r.findings.filter((f) => f.severity !== 'info').map((f) => [f.code, f.line])).toEqual([['cuda.illegal-address', 22]]);
  });

  it('an engine core crash of an unknown kind: the engine\'s last exception line is quoted, not the worker\'s EngineDeadError', () => {
    const r = scanText('w.log', log('worker-engine-unknown-error.log'));
    const problems = r.findings.filter((f) => f.severity !== 'info');
    expect(problems.map((f) => [f.code, f.line, f.count])).toEqual([['python.exception', 29, 2]]);
    expect(problems[0].text).toBe('IndexError: index 151936 is out of bounds for dimension 0 with size 151936');
  });

  it('the generic exception: the last line, the engine core\'s before the worker\'s; explains a lone "initialization failed"', () => {
    const r = scanText('w.log', [
      '(EngineCore pid=7) ERROR 10-07 05:41:37 [core.py:710] KeyError: \'first\'',
      '(EngineCore pid=7) KeyError: \'second\'',
      'RuntimeError: Engine core initialization failed. See root cause above.',
      'ValueError: the worker\'s own, later',
    ].join('\n'));
    expect(r.findings.map((f) => [f.code, f.line, f.text])).toEqual([['python.exception', 2, "KeyError: 'second'"]]);
    const worker = scanText('w.log', 'KeyError: \'a\'\nValueError: b\n');
    expect(worker.findings.map((f) => [f.code, f.line, f.count])).toEqual([['python.exception', 2, 2]]);
  });

  it('EngineDeadError alone (the engine was killed without a word) is reported', () => {
    const r = scanText('w.log', '2026-10-07T05:41:37.512904Z ERROR handlers.generate: vLLM EngineDeadError: EngineCore encountered an issue.\n');
    expect(r.findings.map((f) => f.code)).toEqual(['vllm.engine-dead']);
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

});
