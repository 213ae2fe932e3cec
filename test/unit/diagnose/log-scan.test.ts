import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../../src/errors.js';
import { diagnoseFile, scanPaths } from '../../../src/host/logs/log-scan.js';
import { SAMPLES } from '../../helpers/cli.js';

const LOGS = join(SAMPLES, 'logs');

/** What each real sample log must yield: exactly these codes. */
export const EXPECTED: Record<string, string[]> = {
  'frontend-kv-events-disabled.jsonl': ['dynamo.kv-events-disabled'],
  'frontend-kv-events-disabled.log': ['dynamo.kv-events-disabled'],
  'worker-agg-ready.log': ['vllm.kv-size'],
  'worker-combined-kv-line.log': ['vllm.kv-size'],
  'worker-error804.log': ['cuda.error804'],
  'worker-free-memory.log': ['vllm.free-memory'],
  'worker-lock-wait.log': ['hf.lock-wait'],
  'worker-ucx-no-am.log': ['ucx.no-am-transport'],
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dd-scan-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('scanPaths', () => {
  for (const [name, codes] of Object.entries(EXPECTED)) {
    it(`${name} -> ${codes.join(', ')}`, async () => {
      const r = await scanPaths([join(LOGS, name)]);
      expect(r.findings.map((f) => f.code)).toEqual(codes);
      expect(r.files).toBe(1);
    });
  }

  it('reports the first occurrence with its line number and the KV size per file', async () => {
    const r = await scanPaths([join(LOGS, 'worker-agg-ready.log'), join(LOGS, 'worker-combined-kv-line.log'), join(LOGS, 'worker-lock-wait.log')]);
    const kv = r.findings.find((f) => f.code === 'vllm.kv-size')!;
    expect(kv).toMatchObject({ count: 2, file: join(LOGS, 'worker-agg-ready.log'), line: 11 });
    expect(kv.text).toBe('INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens');
    expect(r.kvTokens).toEqual({
      [join(LOGS, 'worker-agg-ready.log')]: 14816,
      [join(LOGS, 'worker-combined-kv-line.log')]: 9152,
      [join(LOGS, 'worker-lock-wait.log')]: null,
    });
  });

  it('walks folders recursively, takes log files only, and counts each code once with its total', async () => {
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    copyFileSync(join(LOGS, 'worker-lock-wait.log'), join(dir, 'a', 'w1.log'));
    copyFileSync(join(LOGS, 'worker-lock-wait.log'), join(dir, 'a', 'b', 'w2.log'));
    copyFileSync(join(LOGS, 'worker-free-memory.log'), join(dir, 'a', 'b', 'w3.txt'));
    writeFileSync(join(dir, 'a', 'run.json'), '{"note":"Address already in use"}');
    const r = await scanPaths([dir]);
    expect(r.files).toBe(3);
    expect(r.findings.map((f) => [f.code, f.count])).toEqual([['vllm.free-memory', 1], ['hf.lock-wait', 4]]);
    expect(Object.keys(r.kvTokens).sort()).toEqual([join(dir, 'a', 'b', 'w2.log'), join(dir, 'a', 'b', 'w3.txt'), join(dir, 'a', 'w1.log')].sort());
  });

  it('decompresses .gz logs as a stream', async () => {
    writeFileSync(join(dir, 'old.log.gz'), gzipSync(readFileSync(join(LOGS, 'worker-error804.log'))));
    const r = await scanPaths([join(dir, 'old.log.gz')]);
    expect(r.findings.map((f) => [f.code, f.line])).toEqual([['cuda.error804', 2]]);
    expect(r.bytes).toBe(readFileSync(join(LOGS, 'worker-error804.log')).length);
  });

  it('a .gz that is not gzip is reported as unreadable, not thrown (the command decides)', async () => {
    writeFileSync(join(dir, 'bad.log.gz'), 'plain text');
    const r = await scanPaths([join(dir, 'bad.log.gz')]);
    expect(r.partial).toEqual([{ file: join(dir, 'bad.log.gz'), reason: 'not a readable gzip file (incorrect header check)' }]);
    expect(r.bytes).toBe(0);
  });

  it('a truncated .gz (rotation cut short): the lines before the damage are scanned and the other files still count', async () => {
    // an error on line 1, then enough incompressible text that the cut falls well after it
    const text = `RuntimeError: Engine core initialization failed\n${Array.from({ length: 2000 }, (_, i) => `INFO ${i} ${Math.random().toString(36)}`).join('\n')}\n`;
    const gz = gzipSync(text);
    mkdirSync(join(dir, 'logs'));
    writeFileSync(join(dir, 'logs', 'agg-0.log.gz'), gz.subarray(0, gz.length - 2000));
    copyFileSync(join(LOGS, 'worker-ucx-no-am.log'), join(dir, 'logs', 'decode-0.log'));
    const r = await scanPaths([join(dir, 'logs')]);
    expect(r.findings.map((f) => f.code)).toEqual(['ucx.no-am-transport', 'vllm.engine-failed']);
    expect(r.partial).toHaveLength(1);
    expect(r.partial![0].file).toBe(join(dir, 'logs', 'agg-0.log.gz'));
    expect(r.partial![0].reason).toMatch(/^damaged gzip after [\d,]+ lines \(unexpected end of file\); the lines before were scanned$/);
  });

  it('handles CRLF, colour codes, compose prefixes and a missing final newline', async () => {
    const text = [
      'worker-1  | \x1b[1;36m(EngineCore pid=1)\x1b[0;0m INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens',
      'worker-1  | (EngineCore pid=1) ERROR ValueError: No available memory for the cache blocks. Try increasing gpu_memory_utilization',
    ].join('\r\n');
    writeFileSync(join(dir, 'c.log'), text);
    const r = await scanPaths([join(dir, 'c.log')]);
    expect(r.findings.map((f) => [f.code, f.line, f.text])).toEqual([
      ['vllm.no-kv-memory', 2, 'ERROR ValueError: No available memory for the cache blocks. Try increasing gpu_memory_utilization'],
      ['vllm.kv-size', 1, 'INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens'],
    ]);
    expect(r.kvTokens[join(dir, 'c.log')]).toBe(14816);
  });

  it('counts lines right across read-chunk boundaries (files larger than one chunk)', async () => {
    const filler = `${'2026-10-07T05:12:21.001002Z  INFO dynamo_llm::http::service: request completed status=200 duration_ms=804'}\n`;
    const lines = Math.ceil((9 << 20) / filler.length);
    const parts: string[] = [];
    for (let i = 0; i < lines; i++) {
      if (i === 40000 || i === 80001 || i === lines - 1) parts.push('OSError: [Errno 98] Address already in use\n');
      else parts.push(filler);
    }
    writeFileSync(join(dir, 'big.log'), parts.join(''));
    const r = await scanPaths([join(dir, 'big.log')]);
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({ code: 'net.port-in-use', count: 3, line: 40001 });
    // The last line sits behind two chunk boundaries: check its number through a second file with one hit.
    const only = parts.map((p, i) => (i === 40000 || i === 80001 ? filler : p)).join('');
    writeFileSync(join(dir, 'last.log'), only);
    const r2 = await scanPaths([join(dir, 'last.log')]);
    expect(r2.findings[0]).toMatchObject({ count: 1, line: lines });
  });

  it('a file of exactly one read chunk, then small files after a big one: each counted on its own', async () => {
    const hit = 'OSError: [Errno 98] Address already in use\n';
    const filler = `${'x'.repeat(1023)}\n`; // 1 KiB lines: 1,023 of them plus the hit fill exactly 1 MiB
    const exact = filler.repeat(1023) + hit.padStart(1024, ' ');
    expect(Buffer.byteLength(exact)).toBe(1 << 20);
    writeFileSync(join(dir, 'a-exact.log'), exact);
    writeFileSync(join(dir, 'b-big.log'), `${filler.repeat(3000)}${hit}`);
    writeFileSync(join(dir, 'c-small.log'), 'INFO start\nOSError: [Errno 98] Address already in use');
    writeFileSync(join(dir, 'd-small.log'), 'INFO nothing here\n');
    const r = await scanPaths([dir]);
    expect(r.files).toBe(4);
    expect(r.byFile![join(dir, 'a-exact.log')]).toEqual([expect.objectContaining({ code: 'net.port-in-use', count: 1, line: 1024 })]);
    expect(r.byFile![join(dir, 'b-big.log')]).toEqual([expect.objectContaining({ count: 1, line: 3001 })]);
    expect(r.byFile![join(dir, 'c-small.log')]).toEqual([expect.objectContaining({ count: 1, line: 2 })]);
    expect(r.byFile![join(dir, 'd-small.log')]).toEqual([]);
  });

  it('follows a symlinked folder once and never loops on a link back up', async () => {
    const logs = mkdtempSync(join(tmpdir(), 'dd-scan-linked-'));
    try {
      writeFileSync(join(logs, 'w.log'), 'OSError: [Errno 98] Address already in use\n');
      mkdirSync(join(dir, 'runs', 'r1'), { recursive: true });
      writeFileSync(join(dir, 'runs', 'r1', 'x.log'), 'OSError: [Errno 98] Address already in use\n');
      symlinkSync(logs, join(dir, 'runs', 'linked'));
      symlinkSync(logs, join(dir, 'runs', 'linked-again'));
      symlinkSync('..', join(dir, 'runs', 'r1', 'up'));
      const r = await scanPaths([dir]);
      expect(Object.keys(r.kvTokens).sort()).toEqual([join(dir, 'runs', 'linked', 'w.log'), join(dir, 'runs', 'r1', 'x.log')]);
      expect(r.findings[0].count).toBe(2);
    } finally {
      rmSync(logs, { recursive: true, force: true });
    }
  });

  it('keeps memory bounded on a line without newlines and still finds a hit after it', async () => {
    writeFileSync(join(dir, 'long.log'), `${'x'.repeat(9 << 20)}\nOSError: [Errno 98] Address already in use\n`);
    const r = await scanPaths([join(dir, 'long.log')]);
    expect(r.findings[0]).toMatchObject({ code: 'net.port-in-use', line: 2 });
  });

  it('keeps UTF-8 lines whole (a byte like 0x8A inside "Ê" is no newline) and numbers them right', async () => {
    const text = 'INFO démarrage Ê ok\nERROR Ê modèle: OSError: [Errno 98] Address already in use ✓\n';
    writeFileSync(join(dir, 'u.log'), text);
    const r = await scanPaths([join(dir, 'u.log')]);
    expect(r.findings[0]).toMatchObject({ code: 'net.port-in-use', line: 2, text: 'ERROR Ê modèle: OSError: [Errno 98] Address already in use ✓' });
  });

  it('numbers lines right across gunzip chunks of a large .gz', async () => {
    const filler = 'INFO 10-07 05:12:09 [model.py:1510] Using max model len 4096\n';
    const n = Math.ceil((5 << 20) / filler.length);
    const body = `${filler.repeat(n)}RuntimeError: Engine core initialization failed. See root cause above.\n`;
    writeFileSync(join(dir, 'big.log.gz'), gzipSync(body));
    const r = await scanPaths([join(dir, 'big.log.gz')]);
    expect(r.findings[0]).toMatchObject({ code: 'vllm.engine-failed', line: n + 1 });
    expect(r.bytes).toBe(Buffer.byteLength(body));
  });

  it('a missing path is an input error naming it; missingOk skips it', async () => {
    const missing = join(dir, 'nope.log');
    await expect(scanPaths([missing])).rejects.toBeInstanceOf(UserError);
    await expect(scanPaths([missing])).rejects.toThrow(`${missing}: no such file or folder`);
    const r = await scanPaths([missing, join(LOGS, 'worker-agg-ready.log')], { missingOk: true });
    expect(r.files).toBe(1);
    expect(Object.keys(r.kvTokens)).toEqual([join(LOGS, 'worker-agg-ready.log')]);
  });

  it('diagnoseFile explains one crashed process', async () => {
    const f = await diagnoseFile(join(LOGS, 'worker-ucx-no-am.log'));
    expect(f.map((x) => x.code)).toEqual(['ucx.no-am-transport']);
    expect(f[0].fix).toContain('UCX_TLS');
  });
});
