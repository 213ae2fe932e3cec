import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';
import { scanFileFrom, scanPaths, SPLIT_FROM, type FilePart } from '../../../src/host/log-scan.js';

// A log of SPLIT_FROM bytes or more is scanned in two halves, the second on a worker thread (only
// the build has one: the sources under test are TypeScript). The built scan must find exactly what
// one pass in this thread finds, and the built worker must answer for its half.

let dir: string;
let big: string;
/** Where the first line of the second half starts (a line start past the middle). */
let secondHalf: number;

const lines = {
  worker: "ERROR 10-07 05:41:38 [api_server.py:91] KeyError: 'worker side'",
  engine: "(EngineCore_DP0 pid=51207) ERROR 10-07 05:41:37 [core.py:710] ValueError: 'engine side'",
  kv1: '(EngineCore_DP0 pid=51207) INFO 10-07 05:14:17 [kv_cache_utils.py:1087] GPU KV cache size: 9,152 tokens',
  kv2: '(EngineCore_DP0 pid=51207) INFO 10-07 05:14:17 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens',
  lock: '2026-10-07T04:58:21.118004Z  INFO filelock: Still waiting to acquire lock on /home/exp/.cache/huggingface/hub/.locks/models--Qwen--Qwen3-0.6B/f47f71177f32bcd101b7573ec9171e6a57f4f4c31148d38e382306f42996874b.lock (elapsed: 10.1 seconds)',
  healthy: '(APIServer pid=48100) INFO:     127.0.0.1:53122 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dd-big-log-'));
  big = join(dir, 'worker.log');
  // First half: worker exceptions and one KV size; second half: the engine core's exception, a
  // later KV size and a lock wait only there. Each half well over a chunk.
  const half = (special: string[]) => {
    const out: string[] = [];
    const n = Math.ceil(SPLIT_FROM / 2 / (lines.healthy.length + 1)) + 1000;
    for (let i = 0; i < n; i++) out.push(i % 50_000 === 7 ? special[(i / 50_000) | 0] ?? lines.healthy : lines.healthy);
    return out;
  };
  const first = half([lines.worker, lines.kv1, lines.worker]);
  const second = half([lines.engine, lines.lock, lines.kv2, lines.worker]);
  const firstText = `${first.join('\n')}\n`;
  writeFileSync(big, `${firstText}${second.join('\n')}\n`);
  secondHalf = Buffer.byteLength(firstText);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a log big enough to be scanned on two threads', () => {
  it('the built scan (two threads) finds exactly what one pass finds: counts, first lines, the engine quote, the last KV size, line count', async () => {
    const built = (await import(join(ROOT, 'dist', 'host', 'log-scan.js'))) as typeof import('../../../src/host/log-scan.js');
    const [two, one] = [await built.scanPaths([big]), await scanPaths([big])];
    expect(two).toEqual(one);
    const codes = Object.fromEntries(one.findings.map((f) => [f.code, [f.count, f.line, f.text]]));
    expect(codes['python.exception'][0]).toBe(4);
    expect(codes['python.exception'][2]).toContain("ValueError: 'engine side'");
    expect(codes['hf.lock-wait'][0]).toBe(1);
    expect(one.kvTokens[big]).toBe(14816);
  });

  it('the built worker thread answers with what its half holds, its lines numbered from its first', async () => {
    const w = new Worker(join(ROOT, 'dist', 'host', 'log-scan-worker.js'), { workerData: { file: big, start: secondHalf } });
    const [part] = (await once(w, 'message')) as [FilePart];
    expect(part).toEqual(await scanFileFrom(big, secondHalf));
    expect(part.state!.kvTokens).toBe(14816);
    expect(part.state!.hits.get('hf.lock-wait')!.line).toBe(50_000 + 8);
  });
});
