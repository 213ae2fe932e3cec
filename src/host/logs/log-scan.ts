import {
  closeSync, constants as fsConstants, createReadStream, fstatSync, openSync, read as readAsync, readSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { WASM_BUFFER_BYTES, WasmLineScan } from '../../diagnose/needle-scan.js';
import { NEEDLE_SEARCH, Scanner, type FileState } from '../../diagnose/scanner.js';
import type { Finding, ScanResult } from '../../diagnose/types.js';
import { UserError } from '../../errors.js';
import { workerAnswer, type WorkerAnswer } from './worker-answer.js';
import { LineSplitter } from '../../diagnose/line-splitter.js';
import { expand, kindOf, LOG_NAMES_TEXT, statLogPath } from './log-files.js';
import { stat } from 'node:fs/promises';

export { LOG_NAMES_TEXT, statLogPath };

// Streams log files through the pure Scanner in constant memory. Speed matters (a 1 GiB log should
// take a few seconds, a state directory with 10,000 logs too): whole chunks of bytes are searched
// for the signatures' needles at once, and only the lines holding one are decoded and matched,
// against the signatures whose needles they hold. Chunks are read into the buffers of a WebAssembly
// scan (needle-scan.ts), which finds the needles, their lines and the newlines in one call (a line
// carried over from one chunk to the next is copied there); where Node has no WebAssembly, the same
// is done in JavaScript (NEEDLE_SEARCH).
//
// Reading (measured with --cpu-prof, bench/README.md): two 512 KiB buffers serve the whole scan. A
// file's first chunk is read synchronously (a small log is then done in three syscalls; a promise
// per open/read/close cost more than the read, and a fresh buffer per file kept the garbage
// collector busy); a bigger file is read ahead into the other buffer, on the thread pool, while
// the chunk before is scanned. Between files the event loop gets a turn every few milliseconds.
// A big file is read by two threads in parts (scanPlain).

// 512 KiB: measured in round 4 (bench/README.md), when chunks were decoded to strings whole; the
// reads are as fast with it as with 1 MiB. The WebAssembly scan's buffers are this size.
const CHUNK = WASM_BUFFER_BYTES;


export interface ScanOptions {
  /** Skip paths that do not exist instead of failing (run logs of processes that never started). */
  missingOk?: boolean;
  /**
   * Read a named pipe the user named (`diagnose /dev/stdin` fed by a pipe, `<(zcat ...)`) to its end.
   * Off for paths a command builds (a run's logs): a FIFO put there may never send anything.
   */
  pipes?: boolean;
  /** HELPER_FROM_MS for this scan (tests start the helper thread on any file of SPLIT_FROM bytes with 0). */
  helperFromMs?: number;
  /**
   * Paths a command builds (a run's process logs): one that is not a regular file or folder (a
   * FIFO, a device put where a log was) is not read and is said in `partial`; the others are still
   * judged. Off: such a path is a UserError naming it (paths the user named).
   */
  skipOdd?: boolean;
}

/** Scans files and folders (recursively; `.gz` decompressed on the fly). A missing path -> UserError. */
export async function scanPaths(paths: string[], opts: ScanOptions = {}): Promise<ScanResult> {
  const scanner = new Scanner();
  const files: string[] = [];
  const pipes = new Set<string>();
  const partial: { file: string; reason: string }[] = [];
  for (const p of paths) {
    const odd = opts.skipOdd ? await oddKind(p) : null;
    if (odd) partial.push({ file: p, reason: `${odd}, not a log file: not read` });
    else files.push(...(await expand(p, opts, pipes)));
  }
  const seen = new Set<string>();
  const io = newScanIo(opts.helperFromMs);
  let slice = performance.now();
  for (const f of files) {
    if (seen.has(f)) continue;
    seen.add(f);
    const damage = await scanFile(scanner, f, io, pipes.has(f));
    if (damage) partial.push({ file: f, reason: damage });
    if (performance.now() - slice > YIELD_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
  }
  const result = scanner.result();
  return partial.length ? { ...result, partial } : result;
}

/** How long scanning small files may hold the event loop before it yields (timers, renders, signals). */
const YIELD_MS = 8;

/** What a scan reuses for every file: the read buffers (the second made on the first big file), in the WebAssembly scan's memory where there is one. */
interface ScanIo {
  bufs: [Buffer, Buffer | null];
  wasm: WasmLineScan | null;
  helperFromMs: number;
}

function newScanIo(helperFromMs = HELPER_FROM_MS): ScanIo {
  const wasm = WasmLineScan.create(NEEDLE_SEARCH);
  return wasm ? { bufs: [...wasm.buffers], wasm, helperFromMs } : { bufs: [Buffer.allocUnsafe(CHUNK), null], wasm, helperFromMs };
}

/** The findings of one log (the supervisor explains a crashed process with it). */
export async function diagnoseFile(path: string): Promise<Finding[]> {
  return (await scanPaths([path], { missingOk: true })).findings;
}

/** Scans one file (a pipe: read as a stream to its end); returns why it was read only in part (a damaged .gz), else null. */
async function scanFile(scanner: Scanner, file: string, io: ScanIo, pipe = false): Promise<string | null> {
  scanner.addFile(file);
  const splitter = new LineSplitter(scanner, file, io.wasm);
  let damage: string | null = null;
  /** Lines of a big file read in parts (the splitter then saw none). */
  let later = 0;
  if (pipe) {
    try {
      for await (const chunk of createReadStream(file, { highWaterMark: CHUNK })) splitter.push(chunk as Buffer, false);
    } catch (err) {
      throw cannotRead(file, err);
    }
  } else if (/\.gz$/i.test(file)) {
    // zlib only when a .gz comes (loading it cost ~2 ms of every start of every scanning thread).
    const { createGunzip } = await import('node:zlib');
    // Opened without blocking and checked on the descriptor: a FIFO swapped in since the listing must not block.
    const source = createReadStream('', { fd: openRegular(file), highWaterMark: 1 << 20 });
    const stream = createGunzip({ chunkSize: 1 << 20 });
    // pipe() does not forward read errors: without this an unreadable file would hang the loop.
    source.on('error', (err) => stream.destroy(err));
    source.pipe(stream);
    try {
      for await (const chunk of stream) splitter.push(chunk as Buffer, false);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.syscall) throw new UserError(`${file}: cannot read (${e.code ?? e.message})`);
      // A zlib error: what was decompressed before it has been scanned already; keep it.
      const lines = splitter.lineCount();
      damage = lines === 0 && splitter.bytesSeen() === 0
        ? `not a readable gzip file (${e.message})`
        : `damaged gzip after ${lines.toLocaleString('en-US')} line${lines === 1 ? '' : 's'} (${e.message}); the lines before were scanned`;
    }
  } else {
    later = await scanPlain(scanner, file, splitter, io);
  }
  splitter.end();
  scanner.setLines(file, splitter.lineCount() + later);
  return damage;
}

/** What a path is when it is neither a regular file nor a folder ('a named pipe'...); null otherwise or when absent. */
async function oddKind(path: string): Promise<string | null> {
  const st = await stat(path).catch(() => null);
  return st && !st.isFile() && !st.isDirectory() ? kindOf(st) : null;
}

/** A descriptor of a regular file, opened O_NONBLOCK (a FIFO never blocks the open); else a UserError naming it. */
function openRegular(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (err) {
    throw cannotRead(file, err);
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new UserError(`${file}: not a regular file any more; pass log files or folders`);
  }
  return fd;
}

const cannotRead = (file: string, err: unknown) => new UserError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);

/**
 * A plain file through the scan's buffers. A big one (SPLIT_FROM) on a machine with another core is
 * cut into parts of PART bytes, each taken by whichever thread is free next (a shared counter): this
 * one, and a worker thread started once the parts left would keep this thread busy for
 * io.helperFromMs more (helperPays). What each part found is merged in file order as if one pass
 * had read it (Scanner.mergeFile). Returns the lines of the parts (0 when this thread read the file
 * as one: small, one core).
 */
async function scanPlain(scanner: Scanner, file: string, splitter: LineSplitter, io: ScanIo): Promise<number> {
  let fd: number;
  try {
    // O_NONBLOCK: a file swapped for a FIFO since the folder was listed must not block the read.
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (err) {
    throw cannotRead(file, err);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UserError(`${file}: not a regular file any more; pass log files or folders`);
    if (st.size < SPLIT_FROM || availableParallelism() < 2) {
      await scanRange(fd, file, splitter, io, 0, Infinity);
      return 0;
    }
    const count = Math.ceil(st.size / PART);
    const claims = new Int32Array(new SharedArrayBuffer(4));
    const work: ScanParts = { file, count, claims };
    let worker: WorkerAnswer<NumberedPart[]> | null = null;
    const parts: (FilePart | undefined)[] = new Array(count);
    let mine = 0;
    try {
      for (let i = claim(work); i < count; i = claim(work), mine++) {
        const t0 = performance.now();
        parts[i] = await scanPart(fd, file, io, i, count);
        // Part 0 also warms the code up: the rate is judged from the parts after it.
        if (!worker && i > 0 && helperPays(performance.now() - t0, count - i - 1, io.helperFromMs)) {
          worker = workerAnswer<NumberedPart[]>(new URL('./log-scan-worker.js', import.meta.url), work);
        }
      }
    } catch (err) {
      worker?.stop(); // the scan fails here: its other parts are no longer wanted
      throw err;
    }
    // Every part taken here: the worker (still starting, or never started) has nothing to give.
    let answer: NumberedPart[] | null = [];
    if (mine === count) worker?.stop();
    else answer = await worker!.answer;
    let lines = 0;
    for (const p of await partsInOrder(parts, answer, (i) => scanPart(fd, file, io, i, count))) {
      scanner.addBytes(p.bytes);
      if (p.state) scanner.mergeFile(file, p.state, lines);
      lines += p.lines;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}

/** From this size a plain file is scanned in parts, by two threads when that pays (starting a worker costs ~25 ms of CPU, measured on Node 20). */
export const SPLIT_FROM = 32 << 20;
/**
 * A worker thread is started once the parts left would keep this thread busy this long: it is of use
 * only ~100 ms after it is created (its own Node start, its code warming up), and on this 2-core VM
 * two busy threads each run ~1.4x slower. Measured in round 8 (bench/README.md): with 200-230 ms of
 * scanning left (100 MB) a worker made diagnose slower, with 320 ms and more (300-400 MB) faster.
 */
export const HELPER_FROM_MS = 250;

/** Whether to start the worker: `partsLeft` more parts like the last one (`lastPartMs`) take at least `fromMs`. */
export function helperPays(lastPartMs: number, partsLeft: number, fromMs: number): boolean {
  return lastPartMs * partsLeft >= fromMs;
}
/** A part: small enough that the thread left waiting at the end waits little (~20 ms), big enough that its few extra reads do not count. */
export const PART = 4 << 20;

/** What the worker is given: the file, its number of parts, and the counter both threads take parts from. */
export interface ScanParts {
  file: string;
  count: number;
  claims: Int32Array;
}

/**
 * Every part in file order: this thread's (`mine`, by index), the worker's answer's, and any the
 * worker took but did not answer for (it failed: answer null), read now by `read`, which reports
 * any read error itself.
 */
export async function partsInOrder(mine: readonly (FilePart | undefined)[], answer: readonly NumberedPart[] | null, read: (i: number) => Promise<FilePart>): Promise<FilePart[]> {
  const all = [...mine];
  for (const p of answer ?? []) all[p.index] = p;
  for (let i = 0; i < all.length; i++) all[i] ??= await read(i);
  return all as FilePart[];
}

/** The next part nobody has taken (>= count: none left). */
function claim(work: ScanParts): number {
  return Atomics.add(work.claims, 0, 1);
}

/** What a thread found in one part of a file: its lines numbered from the part's first. */
export interface FilePart {
  state: FileState | undefined;
  lines: number;
  bytes: number;
}

export type NumberedPart = FilePart & { index: number };

/**
 * Part i holds the lines that start in [i * PART, (i + 1) * PART): a line is read by the part it
 * starts in, however far it reaches; the last part reads to the end (as one pass would, should the
 * file have grown). Both threads find the same bounds, so the parts tile the file.
 */
async function scanPart(fd: number, file: string, io: ScanIo, i: number, count: number): Promise<FilePart> {
  const scanner = new Scanner();
  scanner.addFile(file);
  const splitter = new LineSplitter(scanner, file, io.wasm);
  const start = lineStartFrom(fd, file, i * PART, io.bufs[0]);
  const end = i + 1 < count ? lineStartFrom(fd, file, (i + 1) * PART, io.bufs[0]) : Infinity;
  if (end > start) await scanRange(fd, file, splitter, io, start, end);
  splitter.end();
  return { state: scanner.fileState(file), lines: splitter.lineCount(), bytes: splitter.bytesSeen() };
}

/** Bytes read at a time looking for a line start (lines are rarely longer). */
const PROBE = 64 << 10;

/** The first line start at or after `at`: just after the first newline at or after at - 1 (the end of the file if none). */
function lineStartFrom(fd: number, file: string, at: number, buf: Buffer): number {
  if (at === 0) return 0;
  for (let pos = at - 1; ;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, PROBE, pos);
    } catch (err) {
      throw cannotRead(file, err);
    }
    if (n === 0) return pos;
    const nl = buf.subarray(0, n).indexOf(10); // '\n'
    if (nl !== -1) return pos + nl + 1;
    pos += n;
  }
}

/** The worker thread's job (log-scan-worker.ts): takes parts of `file` until none are left, and answers with what each held. */
export async function scanParts(work: ScanParts): Promise<NumberedPart[]> {
  const io = newScanIo();
  const fd = openSync(work.file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  const out: NumberedPart[] = [];
  try {
    for (let i = claim(work); i < work.count; i = claim(work)) out.push({ index: i, ...(await scanPart(fd, work.file, io, i, work.count)) });
  } finally {
    closeSync(fd);
  }
  return out;
}

/** [start, end) of an open file through the scan's buffers (end: Infinity = to the end): the first chunk at once, later ones read ahead while the one before is scanned. */
async function scanRange(fd: number, file: string, splitter: LineSplitter, io: ScanIo, start: number, end: number): Promise<void> {
  const [first] = io.bufs;
  const size = first.length;
  const want = (pos: number) => Math.min(size, end - pos);
  let n: number;
  try {
    n = readSync(fd, first, 0, want(start), start);
  } catch (err) {
    throw cannotRead(file, err);
  }
  let pos = start + n;
  let cur = first;
  if (n === size) {
    // A big file: from now on the next chunk is read while this one is scanned.
    const other = (io.bufs[1] ??= Buffer.allocUnsafe(size));
    for (;;) {
      const next = cur === first ? other : first;
      const ahead = pos >= end ? Promise.resolve(0) : readAt(fd, next, pos, want(pos)).catch((err: unknown) => {
        throw cannotRead(file, err);
      });
      splitter.push(cur.subarray(0, n), true);
      n = await ahead;
      if (n === 0) return;
      pos += n;
      cur = next;
    }
  }
  if (n > 0) splitter.push(cur.subarray(0, n), true);
}

function readAt(fd: number, buf: Buffer, position: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => readAsync(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n))));
}
