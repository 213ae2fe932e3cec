import { candidateLines, newLineRecords, type WasmLineScan } from './needle-scan.js';
import { newMatches } from './needle-search.js';
import { NEEDLE_SEARCH, type Scanner } from './scanner.js';

// Chunks of a log's bytes cut into lines, and the lines that hold a needle fed to the scanner
// (host/logs/log-scan.ts reads the chunks). Pure: no I/O, buffers in, scanner calls out.

/** A "line" longer than this is cut (memory stays bounded on files without newlines). */
export const MAX_LINE = 1 << 20;
const NL = 10;

/** Where the needles of a block are and which lines hold them, in JavaScript: one each for the thread (a block is searched and fed at once, without a turn in between). */
const found = newMatches();
const jsRecords = newLineRecords();

/** Cuts chunks into lines and feeds the scanner the lines that hold a needle. */
export class LineSplitter {
  /** Complete lines already passed. */
  private lines = 0;
  /** Bytes of an unfinished line carried over from the previous chunk. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Every byte pushed (tells an unreadable .gz from a damaged one). */
  private seenBytes = 0;
  constructor(
    private readonly scanner: Scanner,
    private readonly file: string,
    private readonly wasm: WasmLineScan | null,
  ) {}

  /** `reused`: the caller overwrites chunk afterwards, so whatever is kept must be copied. */
  push(chunk: Buffer, reused: boolean): void {
    this.scanner.addBytes(chunk.length);
    this.seenBytes += chunk.length;
    let start = 0;
    if (this.pendingBytes > 0) {
      const nl = chunk.indexOf(NL);
      if (nl === -1) {
        this.keep(chunk, reused);
        return;
      }
      this.pending.push(chunk.subarray(0, nl + 1));
      const line = Buffer.concat(this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      this.block(line, 0, line.length);
      start = nl + 1;
    }
    const last = chunk.lastIndexOf(NL);
    if (last >= start) this.block(chunk, start, last + 1);
    const tail = last >= start ? last + 1 : start;
    if (tail < chunk.length) this.keep(chunk.subarray(tail), reused);
  }

  /** Complete lines seen so far. */
  lineCount(): number {
    return this.lines;
  }

  /** Bytes pushed so far. */
  bytesSeen(): number {
    return this.seenBytes;
  }

  end(): void {
    if (this.pendingBytes === 0) return;
    const line = Buffer.concat([...this.pending, Buffer.from('\n')]);
    this.pending = [];
    this.pendingBytes = 0;
    this.block(line, 0, line.length);
  }

  private keep(part: Buffer, reused: boolean): void {
    this.pending.push(reused ? Buffer.from(part) : part);
    this.pendingBytes += part.length;
    if (this.pendingBytes > MAX_LINE) {
      // An endless line: judge what we have as one line, and count it once.
      const line = Buffer.concat([...this.pending, Buffer.from('\n')]);
      this.pending = [];
      this.pendingBytes = 0;
      this.block(line, 0, line.length);
      this.lines--; // the rest of this line follows in the next chunk
    }
  }

  /** buf[start, end) holds complete lines, the last one ending with '\n'. */
  private block(buf: Buffer, start: number, end: number): void {
    // In WebAssembly (a chunk where it was read, a line carried over from the chunk before copied);
    // in JavaScript a carried-over line of more than 64 KiB, a block with thousands of needles, and
    // everything where Node has no WebAssembly.
    const r = this.wasm?.lines(buf, start, end) ?? candidateLines(NEEDLE_SEARCH, buf, start, end, found, jsRecords);
    const { rec, base } = r;
    for (let k = 0, o = r.offset; k < r.count; k++, o += 4) {
      this.scanner.feedCandidate(this.file, this.lines + rec[o] + 1, buf.toString('utf8', rec[o + 1] - base, rec[o + 2] - base), rec[o + 3]);
    }
    this.lines += r.newlines;
  }
}
