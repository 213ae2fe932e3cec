import { constants as fsConstants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

// Reading run logs for `logs`: the last N lines from the END of the file (a multi-GB log is never
// loaded whole), or the whole file, streamed in chunks. Time is linear and memory bounded whatever
// the file holds: each byte is searched for a newline once, and a line longer than MAX_LINE (a
// progress bar without newlines, a 100 MB line) is passed on in MAX_LINE pieces, each printed as
// a line, instead of being collected whole. Following is src/run/follow.ts.

const CHUNK = 64 * 1024;
/** The longest line passed on whole (characters); longer ones arrive in pieces of this size. */
export const MAX_LINE = 1024 * 1024;

export type LinesSink = (lines: string[]) => void | Promise<void>;

export interface ReadOptions {
  /** Byte offset to start at (default 0). */
  offset?: number;
  /** Asked after each batch: true ends the read early (the reader went away: `logs | head`). */
  stop?: () => boolean;
}

/** The open log, or null when there is none (a process that never logged). Only regular files: a
 *  record naming /dev/zero or a FIFO must not make `logs` read forever or block. */
async function openLog(path: string): Promise<FileHandle | null> {
  let fh: FileHandle;
  try {
    // O_NONBLOCK: a FIFO must be refused below, not waited on for a writer that never comes.
    fh = await open(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch {
    return null;
  }
  if (!(await fh.stat()).isFile()) {
    await fh.close();
    throw new Error(`${path}: not a regular file; a log is one`);
  }
  return fh;
}

const noCr = (l: string) => (l.endsWith('\r') ? l.slice(0, -1) : l);

/** Lines as passed on: any longer than MAX_LINE cut into MAX_LINE pieces. */
function bounded(lines: string[]): string[] {
  // Stryker disable next-line ArrowFunction,EqualityOperator: equivalent: only a fast path; the cut below passes a line of at most MAX_LINE on as itself
  if (lines.every((l) => l.length <= MAX_LINE)) return lines;
  return lines.flatMap((l) => {
    const out: string[] = [];
    for (let i = 0; i < l.length || i === 0; i += MAX_LINE) out.push(l.slice(i, i + MAX_LINE));
    return out;
  });
}

/**
 * Streams a file line by line from `offset`. Returns the offset after the last line passed on
 * (the partial last line is passed on only with includePartial), or null when there is no file.
 */
export async function readAllLines(path: string, onLines: LinesSink, includePartial: boolean, o: ReadOptions = {}): Promise<number | null> {
  const fh = await openLog(path);
  if (!fh) return null;
  try {
    return await streamLines(fh, onLines, includePartial, o);
  } finally {
    await fh.close();
  }
}

async function streamLines(fh: FileHandle, onLines: LinesSink, includePartial: boolean, o: ReadOptions): Promise<number> {
  const end = { pos: 0 };
  for await (const lines of lineBatches(fh, includePartial, o, end)) await onLines(lines);
  return end.pos;
}

/** The batches of lines of a file from o.offset; `end.pos` is the offset after the last line passed on once it is done. */
async function* lineBatches(fh: FileHandle, includePartial: boolean, o: ReadOptions, end: { pos: number }): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.allocUnsafe(CHUNK);
  let pos = o.offset ?? 0;
  end.pos = pos;
  /** The line being assembled: never more than MAX_LINE characters plus one chunk. */
  let pending = '';
  for (;;) {
    if (o.stop?.()) {
      end.pos = pos - Buffer.byteLength(pending);
      return;
    }
    const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
    if (bytesRead <= 0) break;
    pos += bytesRead;
    const text = decoder.write(buf.subarray(0, bytesRead));
    const cut = text.lastIndexOf('\n'); // only the new text is searched
    if (cut < 0) {
      pending += text;
    } else {
      const lines = (pending + text.slice(0, cut)).split('\n');
      pending = text.slice(cut + 1);
      end.pos = pos - Buffer.byteLength(pending);
      yield bounded(lines.map(noCr));
    }
    if (pending.length > MAX_LINE) {
      // Whole pieces while more of the line follows: a line of exactly MAX_LINE (or a multiple)
      // waits for its newline, so no empty line appears after it.
      const whole = Math.floor((pending.length - 1) / MAX_LINE) * MAX_LINE;
      const piece = pending.slice(0, whole);
      pending = pending.slice(whole);
      end.pos = pos - Buffer.byteLength(pending);
      yield bounded([piece]);
    }
  }
  pending += decoder.end();
  if (includePartial && pending !== '') {
    end.pos = pos;
    yield bounded([noCr(pending)]);
    return;
  }
  end.pos = pos - Buffer.byteLength(pending);
}

/**
 * Where the last n lines of a file begin, found by reading backwards one chunk at a time (memory
 * stays one chunk however long the lines are). A final line without newline is still being
 * written: it counts as a line only with includePartial.
 */
async function tailStart(fh: FileHandle, size: number, n: number, includePartial: boolean): Promise<number> {
  if (size === 0) return 0;
  const last = Buffer.alloc(1);
  await fh.read(last, 0, 1, size - 1);
  const partial = last[0] !== 10;
  // Start right after the k-th newline from the end (the one ending the last complete line is #1).
  let k: number;
  if (n <= 0) {
    if (includePartial || !partial) return size;
    k = 1;
  } else {
    k = partial && includePartial ? n : n + 1;
  }
  const buf = Buffer.allocUnsafe(CHUNK);
  let pos = size;
  let seen = 0;
  while (pos > 0) {
    const len = Math.min(CHUNK, pos);
    pos -= len;
    const { bytesRead } = await fh.read(buf, 0, len, pos);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] === 10 && ++seen === k) return pos + i + 1;
    }
  }
  return 0;
}

/**
 * Streams the last n lines of a file. Returns the byte offset where following should continue
 * (after the last complete line when includePartial is off), or null when there is no file.
 */
export async function tailFile(path: string, n: number, includePartial: boolean, onLines: LinesSink, o: Omit<ReadOptions, 'offset'> = {}): Promise<number | null> {
  const fh = await openLog(path);
  if (!fh) return null;
  try {
    const start = await tailStart(fh, (await fh.stat()).size, n, includePartial);
    // Stryker disable next-line ConditionalExpression: equivalent as `false`: for n <= 0 the start is the end (or the start of a partial line not shown), so the stream passes nothing and returns the same offset
    if (n <= 0) return start;
    return await streamLines(fh, onLines, includePartial, { ...o, offset: start });
  } finally {
    await fh.close();
  }
}

/** A log read as batches of lines, for merging several logs: see openLines. */
export interface LineSource {
  batches: AsyncGenerator<string[]>;
  /** The offset after the last line passed on, once `batches` is done: where following continues. */
  readonly end: { pos: number };
  /** With a tail: the whole lines of up to one chunk before it, newest last (what came just before, for its time). */
  before: string[];
  close(): Promise<void>;
}

/**
 * A log's lines (its last `tail` lines when given) as batches pulled one at a time, so several
 * logs can be merged with memory bounded by one chunk each; null when there is no file.
 */
export async function openLines(path: string, o: { tail?: number; includePartial: boolean; stop?: () => boolean }): Promise<LineSource | null> {
  const fh = await openLog(path);
  if (!fh) return null;
  const end = { pos: 0 };
  let offset = 0;
  let before: string[] = [];
  try {
    if (o.tail !== undefined) {
      offset = await tailStart(fh, (await fh.stat()).size, o.tail, o.includePartial);
      before = await linesBefore(fh, offset);
      if (o.tail <= 0) {
        end.pos = offset;
        return { batches: (async function* () {})(), end, before, close: () => fh.close() };
      }
    }
  } catch (e) {
    await fh.close();
    throw e;
  }
  return { batches: lineBatches(fh, o.includePartial, { offset, stop: o.stop }, end), end, before, close: () => fh.close() };
}

/** The whole lines in the chunk before `offset` (the first one, maybe cut, left out unless it starts the file). */
async function linesBefore(fh: FileHandle, offset: number): Promise<string[]> {
  if (offset === 0) return [];
  const from = Math.max(0, offset - CHUNK);
  const buf = Buffer.alloc(offset - from);
  const { bytesRead } = await fh.read(buf, 0, buf.length, from);
  const lines = buf.subarray(0, bytesRead).toString('utf8').split('\n').map(noCr);
  lines.pop(); // after the last newline: nothing (offset is a line start)
  return from === 0 ? lines : lines.slice(1);
}
