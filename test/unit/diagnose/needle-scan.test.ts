import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SAMPLES } from '../../helpers/cli.js';
import { candidateLines, newLineRecords, WASM_BUFFER_BYTES, WASM_SCRATCH_BYTES, WasmLineScan, type LineRecords } from '../../../src/diagnose/needle-scan.js';
import { NeedleSearch, newMatches } from '../../../src/diagnose/needle-search.js';
import { NEEDLE_SCAN_WASM } from '../../../src/diagnose/needle-scan-wasm.js';
import { NEEDLE_SEARCH } from '../../../src/diagnose/scanner.js';
import { SIGNATURES } from '../../../src/diagnose/signatures.js';
import { mulberry32 } from '../../../src/probe/random.js';
// @ts-expect-error: a plain script without types
import { wasmBytes } from '../../../scripts/wasm.mjs';

// The scan's inner loop exists twice, in JavaScript and in WebAssembly: a line one of them misses
// is a finding diagnose reports on one machine and not on another. Both must give the same records.

const plain = (r: LineRecords): number[][] => {
  const out: number[][] = [];
  for (let k = 0, o = r.offset; k < r.count; k++, o += 4) out.push([r.rec[o], r.rec[o + 1] - r.base, r.rec[o + 2] - r.base, r.rec[o + 3]]);
  return out;
};

function viaJs(search: NeedleSearch, buf: Buffer, start: number, end: number) {
  const r = candidateLines(search, buf, start, end, newMatches(4), newLineRecords());
  return { lines: plain(r), newlines: r.newlines };
}

/** The text at `at` in one of the scan's own buffers, scanned in WebAssembly. */
function viaWasm(scan: WasmLineScan, text: Buffer, which = 0, at = 0) {
  const buf = scan.buffers[which];
  text.copy(buf, at);
  const r = scan.lines(buf, at, at + text.length);
  if (!r) throw new Error('not scanned in WebAssembly');
  return { lines: plain(r).map(([nl, s, e, b]) => [nl, s - at, e - at, b]), newlines: r.newlines };
}

const NEEDLE_TEXTS = SIGNATURES.flatMap((s) => s.needles);
const FILLER = ['INFO 10-07 05:12:04 [core.py:644] ', 'Error', 'rror: ', 'Engine', ' pid=48211) ', 'é ü 漢 ', '\r', ' ', 'GPU KV cache ', 'x'.repeat(40)];

/** Lines of needles, pieces of needles and filler, each ending with a newline. */
function randomBlock(next: () => number, lines: number): Buffer {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    let line = '';
    const parts = Math.floor(next() * 6);
    for (let p = 0; p < parts; p++) {
      const r = next();
      if (r < 0.3) line += NEEDLE_TEXTS[Math.floor(next() * NEEDLE_TEXTS.length)];
      else if (r < 0.45) {
        const n = NEEDLE_TEXTS[Math.floor(next() * NEEDLE_TEXTS.length)];
        line += n.slice(0, Math.floor(next() * n.length));
      } else line += FILLER[Math.floor(next() * FILLER.length)];
    }
    out.push(`${line}\n`);
  }
  return Buffer.from(out.join(''));
}

describe('the WebAssembly scan', () => {
  const scan = WasmLineScan.create(NEEDLE_SEARCH)!;

  it('is this checkout\'s needle-scan.wat (run `npm run wasm` after editing it)', async () => {
    expect(Buffer.from(NEEDLE_SCAN_WASM, 'base64').equals(await wasmBytes())).toBe(true);
  });

  it('is available on this machine, with read buffers of the scan\'s chunk size', () => {
    expect(scan).not.toBeNull();
    expect(scan.buffers.map((b) => b.length)).toEqual([WASM_BUFFER_BYTES, WASM_BUFFER_BYTES]);
  });

  it('finds the same lines as the JavaScript scan in every sample log', () => {
    const logs = join(SAMPLES, 'logs');
    const text = Buffer.concat(readdirSync(logs).filter((f) => /\.(log|jsonl)$/.test(f)).map((f) => readFileSync(join(logs, f))));
    const whole = Buffer.concat([text, Buffer.from(text.at(-1) === 10 ? '' : '\n')]);
    const js = viaJs(NEEDLE_SEARCH, whole, 0, whole.length);
    expect(js.lines.length).toBeGreaterThan(20);
    expect(viaWasm(scan, whole)).toEqual(js);
  });

  it('finds the same lines in random blocks, at every alignment, in both buffers', () => {
    const next = mulberry32(20261202);
    for (let round = 0; round < 200; round++) {
      const block = randomBlock(next, 1 + Math.floor(next() * 40));
      const at = Math.floor(next() * 64);
      const which = round % 2;
      const padded = Buffer.concat([Buffer.alloc(at, 'y'), block]);
      const js = viaJs(NEEDLE_SEARCH, padded, at, padded.length);
      const shifted = { lines: js.lines.map(([nl, s, e, b]) => [nl, s - at, e - at, b]), newlines: js.newlines };
      expect(viaWasm(scan, block, which, at), `round ${round}`).toEqual(shifted);
    }
  });

  it('numbers lines as the file has them: a needle on the first line, the last line, several in one line, empty lines', () => {
    const text = Buffer.from('Error 804 first\n\n\nplain\nEngineDeadError and Error: and too old\nno needle\nlast too old\n');
    const r = viaWasm(scan, text);
    expect(r.newlines).toBe(7);
    const bits = (code: string) => 1 << SIGNATURES.findIndex((s) => s.code === code);
    expect(r.lines).toEqual([
      [0, 0, 15, bits('cuda.error804')],
      [4, 24, 62, bits('vllm.engine-dead') | bits('python.exception') | bits('cuda.driver-too-old')],
      [6, 73, 85, bits('cuda.driver-too-old')],
    ]);
  });

  it('hands a block with more needles than it keeps (16,384) back to JavaScript, which finds them all', () => {
    const text = Buffer.from('too old\n'.repeat(16_385));
    expect(scan.lines(scan.buffers[0].fill(0), 0, 0)?.count).toBe(0);
    text.copy(scan.buffers[0]);
    expect(scan.lines(scan.buffers[0], 0, text.length)).toBeNull();
    expect(scan.lines(scan.buffers[0], 0, text.length - 8)?.count).toBe(16_384);
    expect(viaJs(NEEDLE_SEARCH, text, 0, text.length).lines).toHaveLength(16_385);
  });

  it('finds no needle that starts before the block (the block may start inside one)', () => {
    const text = Buffer.from('xEngineDeadError too old\n');
    // From 'ngineDeadError too old\n': only 'too old' is inside, at 17.
    const js = viaJs(NEEDLE_SEARCH, text, 2, text.length);
    expect(js.lines).toEqual([[0, 2, 24, 1 << SIGNATURES.findIndex((s) => s.code === 'cuda.driver-too-old')]]);
    text.copy(scan.buffers[1], 100);
    expect(plain(scan.lines(scan.buffers[1], 102, 100 + text.length)!).map(([nl, s, e, b]) => [nl, s - 100, e - 100, b])).toEqual(js.lines);
  });

  it('scans text from elsewhere (a line carried over between reads) by copying it, up to 64 KiB', () => {
    const text = Buffer.from('xx\nplain\nsays too old\nError 804\n');
    const r = scan.lines(text, 3, text.length)!;
    expect({ lines: plain(r), newlines: r.newlines }).toEqual(viaJs(NEEDLE_SEARCH, text, 3, text.length));
    expect(plain(r).map(([, s, e]) => text.toString('utf8', s, e))).toEqual(['says too old', 'Error 804']);
    const line = (n: number) => Buffer.from(`${'x'.repeat(n - 9)}too old\n`);
    expect(scan.lines(line(WASM_SCRATCH_BYTES), 0, WASM_SCRATCH_BYTES)?.count).toBe(1);
    expect(scan.lines(line(WASM_SCRATCH_BYTES + 1), 0, WASM_SCRATCH_BYTES + 1)).toBeNull();
  });

  it('is not made for tables it cannot hold (then the scan stays in JavaScript)', () => {
    // 4 fingerprints per needle, room for 512.
    const many = Array.from({ length: 129 }, (_, i) => ({ text: `needle number ${i}`, mask: 1 }));
    expect(WasmLineScan.create(new NeedleSearch(many))).toBeNull();
    expect(WasmLineScan.create(new NeedleSearch(many.slice(0, 128)))).not.toBeNull();
  });
});
