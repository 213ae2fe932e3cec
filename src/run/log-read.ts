import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

// Reading run logs for `logs`: the last N lines from the END of the file (a multi-GB log is never
// loaded whole), or the whole file streamed in chunks. Following is src/run/follow.ts.

const CHUNK = 64 * 1024;

/** The open file, or null when there is none (a process that never logged). */
async function openOrNull(path: string): Promise<FileHandle | null> {
  try {
    return await open(path, 'r');
  } catch {
    return null;
  }
}

/**
 * Pure: the last n lines of `text`, the tail of a file. `fromStart` says the text begins at byte 0
 * (otherwise its first line is a fragment and is dropped). A final line without newline is still
 * being written: it is included only with includePartial; `partialBytes` tells the caller where
 * complete lines end, so a follower can start there and print that line once it is whole.
 */
export function lastLines(text: string, n: number, fromStart: boolean, includePartial: boolean): { lines: string[]; partialBytes: number } {
  const parts = text.split('\n');
  const partial = parts.pop() ?? '';
  if (!fromStart && parts.length > 0) parts.shift();
  const complete = parts.map((l) => l.replace(/\r$/, ''));
  const all = includePartial && partial !== '' ? [...complete, partial.replace(/\r$/, '')] : complete;
  return { lines: n <= 0 ? [] : all.slice(-n), partialBytes: includePartial ? 0 : Buffer.byteLength(partial) };
}

/** Last n lines of a file and the byte offset where following should continue. null: no such file. */
export async function tailFile(path: string, n: number, includePartial: boolean): Promise<{ lines: string[]; end: number } | null> {
  const fh = await openOrNull(path);
  if (!fh) return null;
  try {
    const size = (await fh.stat()).size;
    let pos = size;
    let newlines = 0;
    const chunks: Buffer[] = [];
    // n complete lines need n+1 newlines in view (the one ending the line before them), plus the
    // partial last line; stop reading backwards as soon as that many are in.
    while (pos > 0 && newlines <= n) {
      const len = Math.min(CHUNK, pos);
      pos -= len;
      const buf = Buffer.allocUnsafe(len);
      const { bytesRead } = await fh.read(buf, 0, len, pos);
      const b = buf.subarray(0, bytesRead);
      chunks.unshift(b);
      for (let i = 0; i < b.length; i++) if (b[i] === 10) newlines++;
    }
    const { lines, partialBytes } = lastLines(Buffer.concat(chunks).toString('utf8'), n, pos === 0, includePartial);
    return { lines, end: size - partialBytes };
  } finally {
    await fh.close();
  }
}

/**
 * Streams a whole file line by line (chunks of 64 KiB). Returns the offset after the last complete
 * line (the partial last line is emitted only with includePartial), or null when there is no file.
 */
export async function readAllLines(path: string, onLines: (lines: string[]) => void | Promise<void>, includePartial: boolean): Promise<number | null> {
  const fh = await openOrNull(path);
  if (!fh) return null;
  try {
    const decoder = new StringDecoder('utf8');
    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = 0;
    let pending = '';
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
      if (bytesRead <= 0) break;
      pos += bytesRead;
      pending += decoder.write(buf.subarray(0, bytesRead));
      const cut = pending.lastIndexOf('\n');
      if (cut >= 0) {
        await onLines(pending.slice(0, cut).split('\n').map((l) => l.replace(/\r$/, '')));
        pending = pending.slice(cut + 1);
      }
    }
    pending += decoder.end();
    if (includePartial && pending !== '') {
      await onLines([pending.replace(/\r$/, '')]);
      return pos;
    }
    return pos - Buffer.byteLength(pending);
  } finally {
    await fh.close();
  }
}
