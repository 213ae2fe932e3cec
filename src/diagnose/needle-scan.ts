import { NEEDLE_SCAN_WASM } from './needle-scan-wasm.js';
import { LITTLE_ENDIAN, type Matches, type NeedleSearch } from './needle-search.js';

// Which lines of a block of text hold a needle (pure): the scan's inner loop. Two ways to the same
// records: in JavaScript (NeedleSearch.search, then newline by newline with Buffer.indexOf) and in
// WebAssembly (needle-scan.wat: the same search over the same tables, then newlines 16 bytes at a
// time). The WebAssembly way needs the text in its own memory: a scan reads into its two buffers.
// Why (bench/README.md, round 8): on a failure-dense log the JavaScript search ran interpreted for
// each thread's first megabytes, and a Buffer.indexOf per line cost more than the line's bytes.

/**
 * Lines of a block that hold needles, 4 numbers each from `offset` in `rec`: the newlines in the
 * block before the line, where the line starts and where it ends (its newline; `end` when it has
 * none), and the OR of its needles' bits. Positions are `base` more than indexes into the block's
 * buffer.
 */
export interface LineRecords {
  rec: Int32Array;
  offset: number;
  count: number;
  /** Newlines in the whole block. */
  newlines: number;
  base: number;
}

const NL = 10;

export function newLineRecords(): LineRecords {
  return { rec: new Int32Array(4 * 256), offset: 0, count: 0, newlines: 0, base: 0 };
}

/** The records of buf[start, end) (whole lines, the last ending with a newline), in JavaScript. */
export function candidateLines(search: NeedleSearch, buf: Buffer, start: number, end: number, found: Matches, out: LineRecords): LineRecords {
  const n = search.search(buf, start, end, found);
  const { at, bits } = found;
  let lineStart = start;
  // The newline ending the line at lineStart; `before`: the newlines before lineStart.
  let nl = n === 0 ? end : buf.indexOf(NL, start);
  let before = 0;
  let count = 0;
  for (let i = 0; i < n;) {
    while (nl < at[i]) {
      before++;
      lineStart = nl + 1;
      nl = buf.indexOf(NL, lineStart);
    }
    // Every needle in this line: the line is judged once, on the signatures of all of them.
    let lineBits = 0;
    while (i < n && at[i] < nl) lineBits |= bits[i++];
    if (4 * count + 4 > out.rec.length) {
      const grown = new Int32Array(out.rec.length * 2);
      grown.set(out.rec);
      out.rec = grown;
    }
    const o = 4 * count++;
    out.rec[o] = before;
    out.rec[o + 1] = lineStart;
    out.rec[o + 2] = nl;
    out.rec[o + 3] = lineBits;
  }
  let rest = 0;
  for (let p = buf.indexOf(NL, lineStart); p !== -1 && p < end; p = buf.indexOf(NL, p + 1)) rest++;
  out.offset = 0;
  out.count = count;
  out.newlines = before + rest;
  out.base = 0;
  return out;
}

// needle-scan.wat's memory layout (bytes).
const SEEN = 0;
const HEAD = 8192;
const FINGERPRINTS = 270336;
const NEEDLES = 282624;
const NEEDLE_BYTES = 286720;
const RECORDS = 421888;
const TEXT = 1 << 20;
/** Bytes of each of a scan's two read buffers. */
export const WASM_BUFFER_BYTES = 512 << 10;
/** Where text from outside the read buffers is copied (a line carried over from one read to the next), and how much fits. */
const SCRATCH = TEXT + 2 * WASM_BUFFER_BYTES;
export const WASM_SCRATCH_BYTES = 64 << 10;
const MAX_FINGERPRINTS = (NEEDLES - FINGERPRINTS) / 24;
const MAX_NEEDLES = (NEEDLE_BYTES - NEEDLES) / 12;
const MAX_NEEDLE_BYTES = 4096;

// @types/node 20 does not declare WebAssembly (lib.dom does); what this module uses of it.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Instance {
    constructor(module: Module);
    readonly exports: unknown;
  }
  interface Memory {
    readonly buffer: ArrayBuffer;
  }
  interface Global {
    value: unknown;
  }
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled module, once per thread; null where WebAssembly is missing (`node --jitless`). */
function wasmModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(NEEDLE_SCAN_WASM, 'base64'));
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

interface ScanExports {
  memory: WebAssembly.Memory;
  newlines: WebAssembly.Global;
  scan(start: number, end: number): number;
}

/** One scan's WebAssembly instance: its two read buffers, and the records of a block in them. */
export class WasmLineScan {
  /** The read buffers: text in them is scanned where it is. */
  readonly buffers: [Buffer, Buffer];
  private readonly scratch: Buffer;
  private readonly out: LineRecords;

  private constructor(private readonly exports: ScanExports) {
    const mem = exports.memory.buffer;
    this.buffers = [Buffer.from(mem, TEXT, WASM_BUFFER_BYTES), Buffer.from(mem, TEXT + WASM_BUFFER_BYTES, WASM_BUFFER_BYTES)];
    this.scratch = Buffer.from(mem, SCRATCH, WASM_SCRATCH_BYTES);
    this.out = { rec: new Int32Array(mem), offset: RECORDS >> 2, count: 0, newlines: 0, base: 0 };
  }

  /** An instance holding `search`'s tables; null where it cannot (no WebAssembly, a big-endian machine, tables too big). */
  static create(search: NeedleSearch): WasmLineScan | null {
    const t = search.tables();
    const mod = wasmModule();
    if (!mod || !LITTLE_ENDIAN || t.word.length > MAX_FINGERPRINTS || t.starts.length > MAX_NEEDLES || t.bytes.length > MAX_NEEDLE_BYTES) return null;
    const exports = new WebAssembly.Instance(mod).exports as ScanExports;
    const words = new Int32Array(exports.memory.buffer);
    words.set(t.seen, SEEN >> 2);
    words.set(t.head, HEAD >> 2);
    for (let f = 0; f < t.word.length; f++) {
      words.set([t.word[f], t.after[f], t.afterMask[f], t.needle[f], t.offset[f], t.chain[f]], (FINGERPRINTS >> 2) + 6 * f);
    }
    for (let k = 0; k < t.starts.length; k++) words.set([t.starts[k], t.lengths[k], t.masks[k]], (NEEDLES >> 2) + 3 * k);
    new Uint8Array(exports.memory.buffer).set(t.bytes, NEEDLE_BYTES);
    return new WasmLineScan(exports);
  }

  /**
   * candidateLines() of buf[start, end): in place in one of the read buffers, else copied (up to
   * WASM_SCRATCH_BYTES). null when it is too long to copy or holds too many needles.
   */
  lines(buf: Buffer, start: number, end: number): LineRecords | null {
    let base: number;
    if (buf.buffer === this.exports.memory.buffer) base = buf.byteOffset;
    else if (end - start <= WASM_SCRATCH_BYTES) {
      buf.copy(this.scratch, 0, start, end);
      base = SCRATCH - start;
    } else return null;
    const count = this.exports.scan(base + start, base + end);
    if (count < 0) return null;
    const out = this.out;
    out.count = count;
    out.newlines = this.exports.newlines.value as number;
    out.base = base;
    return out;
  }
}
