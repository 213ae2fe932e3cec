import { createReadStream, type Stats } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { prefilterRegExps, Scanner } from '../diagnose/scanner.js';
import type { Finding, ScanResult } from '../diagnose/types.js';
import { UserError } from '../errors.js';

// Streams log files through the pure Scanner in constant memory. Speed matters (a 1 GiB log should
// take a few seconds): whole chunks are searched with the prefilter regexes over an ascii view
// (byte offsets = string offsets, and every needle is ASCII), and only the lines they hit are
// decoded and matched per signature. Newlines are counted with Buffer.indexOf (memchr).

// 1 MiB: above Node's threshold (~1,007 KiB) for making the ascii view an external string (see block()).
const CHUNK = 1 << 20;
/** A "line" longer than this is cut (memory stays bounded on files without newlines). */
const MAX_LINE = 1 << 20;
const NL = 10;

/** Files taken from folders: logs, rotated logs, and their .gz. Files named directly are always scanned. */
const LOG_NAME = /\.(?:log|txt|jsonl|out|err)(?:\.\d+)?(?:\.gz)?$/i;
/** LOG_NAME for people. */
export const LOG_NAMES_TEXT = '*.log, *.txt, *.jsonl, *.out, *.err, rotated (*.log.1) and gzipped (*.log.gz)';

export interface ScanOptions {
  /** Skip paths that do not exist instead of failing (run logs of processes that never started). */
  missingOk?: boolean;
}

/** Scans files and folders (recursively; `.gz` decompressed on the fly). A missing path -> UserError. */
export async function scanPaths(paths: string[], opts: ScanOptions = {}): Promise<ScanResult> {
  const scanner = new Scanner();
  const files: string[] = [];
  for (const p of paths) files.push(...(await expand(p, opts)));
  const seen = new Set<string>();
  const partial: { file: string; reason: string }[] = [];
  for (const f of files) {
    if (seen.has(f)) continue;
    seen.add(f);
    const damage = await scanFile(scanner, f);
    if (damage) partial.push({ file: f, reason: damage });
  }
  const result = scanner.result();
  return partial.length ? { ...result, partial } : result;
}

/** The findings of one log (the supervisor explains a crashed process with it). */
export async function diagnoseFile(path: string): Promise<Finding[]> {
  return (await scanPaths([path], { missingOk: true })).findings;
}

/**
 * stat of a log path the user named; a missing or unreadable one is a UserError naming it (null
 * with missingOk for a missing one). `hint` is added to the "no such" message.
 */
export async function statLogPath(path: string, o: { missingOk?: boolean; label?: string; hint?: string } = {}): Promise<Stats | null> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const missing = code === 'ENOENT' || code === 'ENOTDIR';
    if (o.missingOk && missing) return null;
    const at = `${o.label ?? ''}${path}`;
    if (missing) throw new UserError(`${at}: no such file or folder; pass log files or folders${o.hint ?? ''}`);
    throw new UserError(`${at}: cannot read (${code ?? (err as Error).message})`);
  }
  // A device (/dev/zero, /dev/urandom) never ends and a FIFO may never send anything: a log is a file.
  if (!st.isFile() && !st.isDirectory()) {
    throw new UserError(`${o.label ?? ''}${path}: ${kindOf(st)}, not a log file; pass log files or folders`);
  }
  return st;
}

function kindOf(st: Stats): string {
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

async function expand(path: string, opts: ScanOptions): Promise<string[]> {
  const st = await statLogPath(path, { missingOk: opts.missingOk });
  if (!st) return [];
  if (st.isDirectory()) {
    const out: string[] = [];
    await walk(path, out, new Set([await realpath(path)]));
    return out;
  }
  return [path];
}

/** Depth-first, names sorted, symlinks followed once (a link loop is visited once). */
async function walk(dir: string, out: string[], visited: Set<string>): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = join(dir, e.name);
    let isDir = e.isDirectory();
    let isFile = e.isFile();
    if (e.isSymbolicLink()) {
      const st = await stat(p).catch(() => null);
      if (!st) continue;
      isDir = st.isDirectory();
      isFile = st.isFile();
    }
    if (isDir) {
      const real = await realpath(p).catch(() => p);
      if (visited.has(real)) continue;
      visited.add(real);
      await walk(p, out, visited);
    } else if (isFile && LOG_NAME.test(e.name)) {
      out.push(p);
    }
  }
}

/** Scans one file; returns why it was read only in part (a damaged .gz), else null. */
async function scanFile(scanner: Scanner, file: string): Promise<string | null> {
  scanner.addFile(file);
  const splitter = new LineSplitter(scanner, file);
  let damage: string | null = null;
  if (/\.gz$/i.test(file)) {
    const source = createReadStream(file, { highWaterMark: 1 << 20 });
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
    // Plain files: read into one reused buffer (no per-chunk allocation).
    const fh = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
      throw new UserError(`${file}: cannot read (${err.code ?? err.message})`);
    });
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
        if (bytesRead === 0) break;
        splitter.push(buf.subarray(0, bytesRead), true);
      }
    } finally {
      await fh.close();
    }
  }
  splitter.end();
  return damage;
}

/** Cuts chunks into lines and feeds the scanner the lines the prefilter hits. */
class LineSplitter {
  /** Complete lines already passed. */
  private lines = 0;
  /** Bytes of an unfinished line carried over from the previous chunk. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Every byte pushed (tells an unreadable .gz from a damaged one). */
  private seenBytes = 0;
  private readonly pres = prefilterRegExps();

  constructor(
    private readonly scanner: Scanner,
    private readonly file: string,
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
    // 'ascii' maps each byte to one char (high bit dropped), so string offsets are byte offsets, and
    // for chunks >= 1 MiB Node hands V8 an external string: ~4x cheaper than 'latin1' (measured).
    // Every needle is ASCII, so no hit is lost; a masked UTF-8 byte can only add a candidate,
    // which the real match on the UTF-8 decoded line rejects. Line bounds come from the Buffer.
    const text = buf.toString('ascii', start, end);
    const starts = this.pres.length === 1 ? lineStartsHit(this.pres[0], text, buf, start) : mergeSorted(this.pres.map((re) => lineStartsHit(re, text, buf, start)));
    let counted = start; // newlines before this offset are already in this.lines
    for (const lineStart of starts) {
      const lineEnd = buf.indexOf(NL, lineStart);
      this.lines += countNewlines(buf, counted, lineStart);
      counted = lineStart;
      this.scanner.feed(this.file, this.lines + 1, buf.toString('utf8', lineStart, lineEnd));
    }
    this.lines += countNewlines(buf, counted, end);
  }
}

/** Buffer offsets of the starts of lines the regex hits (text = buf from `base`), ascending, each line once. */
function lineStartsHit(re: RegExp, text: string, buf: Buffer, base: number): number[] {
  const out: number[] = [];
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const at = base + m.index;
    out.push(at === 0 ? 0 : buf.lastIndexOf(NL, at - 1) + 1);
    // Continue after this line: one hit per line is enough.
    re.lastIndex = buf.indexOf(NL, at) - base + 1;
  }
  return out;
}

/** Ascending union of ascending lists, duplicates removed. */
function mergeSorted(lists: number[][]): number[] {
  const nonEmpty = lists.filter((l) => l.length > 0);
  if (nonEmpty.length <= 1) return nonEmpty[0] ?? [];
  const all = nonEmpty.flat().sort((a, b) => a - b);
  return all.filter((v, i) => i === 0 || v !== all[i - 1]);
}

function countNewlines(buf: Buffer, from: number, to: number): number {
  let n = 0;
  let p = buf.indexOf(NL, from);
  while (p !== -1 && p < to) {
    n++;
    p = buf.indexOf(NL, p + 1);
  }
  return n;
}
