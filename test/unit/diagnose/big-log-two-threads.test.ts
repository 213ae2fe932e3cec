import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';
import { Scanner, scanText } from '../../../src/diagnose/scanner.js';
import { HELPER_FROM_MS, helperPays, PART, partsInOrder, scanPaths, SPLIT_FROM, type FilePart, type NumberedPart } from '../../../src/host/logs/log-scan.js';

// A log of SPLIT_FROM bytes or more is read in parts of PART bytes by this thread and a worker
// thread, each taking the next part from a shared counter (only the build has a worker: the sources
// under test are TypeScript, and read every part in this thread). Either way the scan must find
// exactly what one pass over the text finds, wherever the part bounds fall in a line.

let dir: string;
let big: string;
let text: string;

const lines = {
  worker: "ERROR 10-07 05:41:38 [api_server.py:91] KeyError: 'worker side'",
  engine: "(EngineCore_DP0 pid=51207) ERROR 10-07 05:41:37 [core.py:710] ValueError: 'engine side'",
  kv1: '(EngineCore_DP0 pid=51207) INFO 10-07 05:14:17 [kv_cache_utils.py:1087] GPU KV cache size: 9,152 tokens',
  kv2: '(EngineCore_DP0 pid=51207) INFO 10-07 05:14:17 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens',
  lock: '2026-10-07T04:58:21.118004Z  INFO filelock: Still waiting to acquire lock on /home/exp/.cache/huggingface/hub/.locks/models--Qwen--Qwen3-0.6B/f47f71177f32bcd101b7573ec9171e6a57f4f4c31148d38e382306f42996874b.lock (elapsed: 10.1 seconds)',
  healthy: '(APIServer pid=48100) INFO:     127.0.0.1:53122 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
};

/** Healthy lines up to exactly `upTo` bytes (the last one padded to fit). */
function fill(out: string[], size: { n: number }, upTo: number) {
  while (size.n < upTo) {
    const room = upTo - size.n - 1; // the newline
    const line = room >= lines.healthy.length * 2 ? lines.healthy : 'x'.repeat(Math.max(0, room));
    out.push(line);
    size.n += line.length + 1;
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dd-big-log-'));
  big = join(dir, 'worker.log');
  const out: string[] = [];
  const size = { n: 0 };
  const add = (line: string) => {
    out.push(line);
    size.n += line.length + 1;
  };
  // Part 0: worker exceptions and the first KV size.
  fill(out, size, 1_000_000);
  add(lines.worker);
  add(lines.kv1);
  // A line ends exactly at the first bound: part 1 starts with the engine's exception.
  fill(out, size, PART);
  add(lines.engine);
  // A failure line across the second bound: part 1 reads it to its end, part 2 starts after it.
  fill(out, size, 2 * PART - 40);
  add(lines.lock);
  // A 100 KiB line across the third bound (longer than one look for a line start), a finding after it.
  fill(out, size, 3 * PART - 50_000);
  add(`${'y'.repeat(100 << 10)} ${lines.worker}`);
  add(lines.worker);
  // A 5 MiB line without any needle covers all of part 4 (no line starts in it: an empty part).
  fill(out, size, 4 * PART - 1000);
  add('z'.repeat(5 << 20));
  add(lines.kv2);
  fill(out, size, SPLIT_FROM + (1 << 20));
  // The last line has no newline: the last part reads it to the end.
  text = `${out.join('\n')}\n${lines.engine}`;
  writeFileSync(big, text);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a log big enough to be read in parts by two threads', () => {
  it('reads as one pass: counts, first lines, the engine quote, the last KV size, line count, bytes', async () => {
    const one = scanText(big, readFileSync(big, 'utf8'));
    expect(await scanPaths([big])).toEqual(one); // every part in this thread
    const built = (await import(join(ROOT, 'dist', 'host', 'logs', 'log-scan.js'))) as typeof import('../../../src/host/logs/log-scan.js');
    expect(await built.scanPaths([big], { helperFromMs: 0 })).toEqual(one); // parts shared with the built worker, started after part 1
    expect(await built.scanPaths([big])).toEqual(one); // a worker only if the rest outlasts its start (HELPER_FROM_MS)
    const codes = Object.fromEntries(one.findings.map((f) => [f.code, [f.count, f.line, f.text]]));
    // Four exceptions (the one after 100 KiB of text is no exception line); the quote is the engine's
    // last, on the unterminated last line: line numbers carried across every part.
    expect(codes['python.exception'][0]).toBe(4);
    expect(codes['python.exception'][1]).toBe(text.split('\n').length);
    expect(codes['python.exception'][2]).toContain("ValueError: 'engine side'");
    expect(codes['hf.lock-wait'][0]).toBe(1);
    expect(one.kvTokens[big]).toBe(14816);
    expect(one.lines?.[big]).toBe(text.split('\n').length);
  });

  it('the built worker takes the parts left on the counter and answers for each, lines numbered from the part', async () => {
    const count = Math.ceil(Buffer.byteLength(text) / PART);
    const claims = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(claims, 0, 1); // part 0 is taken: the worker reads parts 1..count-1
    const w = new Worker(join(ROOT, 'dist', 'host', 'logs', 'log-scan-worker.js'), { workerData: { file: big, count, claims } });
    const [answer] = (await once(w, 'message')) as [NumberedPart[]];
    expect(answer.map((p) => p.index)).toEqual([...Array(count).keys()].slice(1));
    expect(Atomics.load(claims, 0)).toBeGreaterThanOrEqual(count);
    // Part 1 starts with the engine's exception, exactly at its bound.
    expect(answer[0].state!.hits.get('python.exception')).toMatchObject({ line: 1, engine: true });
    expect(answer[3].lines).toBe(0); // part 4: inside the 5 MiB line
    // Part 0 read here, merged with the worker's: one pass.
    const whole = scanText(big, text);
    const all = await partsInOrder([], answer, async () => {
      const s = new Scanner();
      s.addFile(big);
      const part0 = text.slice(0, PART);
      part0.split('\n').slice(0, -1).forEach((l, i) => s.feed(big, i + 1, l));
      return { state: s.fileState(big), lines: part0.split('\n').length - 1, bytes: PART };
    });
    const merged = new Scanner();
    let n = 0;
    for (const p of all) {
      merged.addBytes(p.bytes);
      merged.mergeFile(big, p.state!, n);
      n += p.lines;
    }
    merged.setLines(big, n);
    expect(merged.result()).toEqual(whole);
  });
});

describe('when the worker thread is started', () => {
  it('once the parts left, at the last part\'s pace, would take HELPER_FROM_MS or more: exactly that is enough', () => {
    expect(HELPER_FROM_MS).toBe(250);
    expect(helperPays(10, 25, 250)).toBe(true);
    expect(helperPays(10, 24, 250)).toBe(false);
    expect(helperPays(10.5, 24, 250)).toBe(true);
    expect(helperPays(100, 0, 250)).toBe(false);
  });
});

describe('partsInOrder', () => {
  const part = (lines: number): FilePart => ({ state: undefined, lines, bytes: lines * 10 });
  it("keeps this thread's parts and the worker's in file order, reading none again", async () => {
    const read: number[] = [];
    const all = await partsInOrder([part(1), undefined, part(3)], [{ index: 1, ...part(2) }], async (i) => (read.push(i), part(99)));
    expect(all.map((p) => p.lines)).toEqual([1, 2, 3]);
    expect(read).toEqual([]);
  });
  it('reads here the parts a failed worker took (no answer), in order', async () => {
    const read: number[] = [];
    const all = await partsInOrder([undefined, part(2), undefined], null, async (i) => (read.push(i), part(10 + i)));
    expect(all.map((p) => p.lines)).toEqual([10, 2, 12]);
    expect(read).toEqual([0, 2]);
  });
});
