import { closeSync, constants as fsConstants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

// The one reader of files we did not write (a restart request, a stored bench result, the Hugging
// Face cache's refs/main, a setup marker or lock in a folder someone named): opened without
// blocking (O_NONBLOCK: a FIFO must not wait for a writer), without following a final symlink
// (O_NOFOLLOW, unless the caller reads a store whose files are links by design, as an HF snapshot's
// are), checked to be a regular file on the open descriptor (fstat: no race with a rename), and
// bounded in size before a byte is read (the size said, then at most one byte past the bound read,
// so a file that grows meanwhile is refused too). /dev/zero, /proc files and FIFOs are "not a
// regular file"; a 1 GiB file is "too large" without reading it.

export type BoundedFailure =
  | { ok: false; why: 'absent'; message: string }
  | { ok: false; why: 'link'; message: string }
  | { ok: false; why: 'not-a-file'; message: string }
  | { ok: false; why: 'too-large'; message: string; size: number }
  | { ok: false; why: 'unreadable'; message: string; code: string };

export type BoundedRead = { ok: true; text: string; bytes: number } | BoundedFailure;

export interface BoundedOptions {
  /** The most bytes read; a larger file is refused unread. */
  maxBytes: number;
  /** Follow a final symlink (HF snapshots: every file is a link into blobs/). Default false. */
  follow?: boolean;
}

const flags = (follow: boolean) => fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | (follow ? 0 : fsConstants.O_NOFOLLOW);

/** Pure: a size for people: 1.0 GiB, 17.0 MiB, 12 KiB, 300 bytes. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

function openFailure(err: unknown, follow: boolean): BoundedFailure {
  const code = (err as NodeJS.ErrnoException).code ?? String(err);
  if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, why: 'absent', message: 'not there' };
  // O_NOFOLLOW on a symlink: ELOOP (Linux).
  if (code === 'ELOOP' && !follow) return { ok: false, why: 'link', message: 'is a symbolic link, which is not followed' };
  if (code === 'ENXIO') return { ok: false, why: 'not-a-file', message: 'is not a regular file (a socket or device)' };
  return { ok: false, why: 'unreadable', message: `cannot be read (${code})`, code };
}

function kindFailure(st: { isFile(): boolean; isDirectory(): boolean; isFIFO(): boolean; size: number }, max: number): BoundedFailure | null {
  if (st.isDirectory()) return { ok: false, why: 'not-a-file', message: 'is a folder, not a file' };
  if (st.isFIFO()) return { ok: false, why: 'not-a-file', message: 'is a named pipe (FIFO), not a regular file' };
  if (!st.isFile()) return { ok: false, why: 'not-a-file', message: 'is not a regular file (a device or socket)' };
  if (st.size > max) return { ok: false, why: 'too-large', size: st.size, message: `is ${sizeText(st.size)}, more than the ${sizeText(max)} read at most` };
  return null;
}

/** The first read of a file whose size fstat does not tell (/proc files say 0). */
const PROC_FIRST_READ = 64 * 1024;

const grew = (max: number): BoundedFailure => ({ ok: false, why: 'too-large', size: max + 1, message: `grew past the ${sizeText(max)} read at most while being read` });

/**
 * Reads into a buffer sized by fstat (plus one byte, to see growth), grown while the file grows,
 * never past maxBytes + 1: the bound holds whatever the file does meanwhile.
 */
class Accumulator {
  buf: Buffer;
  n = 0;
  done = false;
  constructor(private readonly max: number, size: number) {
    // A /proc file says size 0: one read of a page or more, not a byte at a time (each read of
    // /proc/PID/environ is a look at a process that may exec meanwhile: the fewer, the truer).
    this.buf = Buffer.alloc(Math.min(max, size || PROC_FIRST_READ) + 1);
  }
  took(got: number): void {
    this.n += got;
    if (got === 0 || this.n > this.max) this.done = true;
    else if (this.n === this.buf.length) {
      const bigger = Buffer.alloc(Math.min(this.max + 1, this.buf.length * 2));
      this.buf.copy(bigger, 0, 0, this.n);
      this.buf = bigger;
    }
  }
  result(): BoundedRead {
    return this.n > this.max ? grew(this.max) : { ok: true, text: this.buf.toString('utf8', 0, this.n), bytes: this.n };
  }
}

/** A file we did not write, read whole if it is a regular file of at most maxBytes (UTF-8). */
export async function readBounded(path: string, o: BoundedOptions): Promise<BoundedRead> {
  const follow = o.follow ?? false;
  let fh;
  try {
    fh = await open(path, flags(follow));
  } catch (err) {
    return openFailure(err, follow);
  }
  try {
    const st = await fh.stat();
    const bad = kindFailure(st, o.maxBytes);
    if (bad) return bad;
    const acc = new Accumulator(o.maxBytes, st.size);
    while (!acc.done) acc.took((await fh.read(acc.buf, acc.n, acc.buf.length - acc.n, acc.n)).bytesRead);
    return acc.result();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return { ok: false, why: 'unreadable', message: `cannot be read (${code})`, code };
  } finally {
    await fh.close();
  }
}

/** readBounded, synchronously (for the supervisor's signal handler and setup's lock). */
export function readBoundedSync(path: string, o: BoundedOptions): BoundedRead {
  const follow = o.follow ?? false;
  let fd: number;
  try {
    fd = openSync(path, flags(follow));
  } catch (err) {
    return openFailure(err, follow);
  }
  try {
    const st = fstatSync(fd);
    const bad = kindFailure(st, o.maxBytes);
    if (bad) return bad;
    const acc = new Accumulator(o.maxBytes, st.size);
    while (!acc.done) acc.took(readSync(fd, acc.buf, acc.n, acc.buf.length - acc.n, acc.n));
    return acc.result();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return { ok: false, why: 'unreadable', message: `cannot be read (${code})`, code };
  } finally {
    closeSync(fd);
  }
}

/** The text, or null for any refusal (callers for whom a bad file means "none"). */
export const textOrNull = (r: BoundedRead): string | null => (r.ok ? r.text : null);
