import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, watch, type FSWatcher } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { MAX_LINE } from './log-read.js';

// Follows a log file as it grows: fs.watch wakes us at once (inotify), and a short poll catches what
// fs.watch misses (it can drop events, and does not see a file that does not exist yet).

export interface FollowOptions {
  /** Fallback poll interval; default 100 ms. */
  pollMs?: number;
  /** Start at this byte offset (default 0: the whole file). */
  offset?: number;
}

export interface Follower {
  /** Reads whatever is new right now (e.g. after the writer exited) and delivers its lines. */
  drain(): void;
  /**
   * Stops watching; a final partial line (no newline yet) is delivered. Called from inside the
   * listener, it delivers nothing more: the text read after the current line is dropped.
   */
  stop(): void;
  readonly offset: number;
}

const CHUNK = 64 * 1024;

export function followFile(path: string, onLine: (line: string) => void, opts: FollowOptions = {}): Follower {
  let fd: number | null = null;
  let offset = opts.offset ?? 0;
  let pending = '';
  let decoder = new StringDecoder('utf8');
  let watcher: FSWatcher | null = null;
  let stopped = false;
  // A drain in progress: a stop() or drain() from inside the listener must not read (and deliver)
  // again underneath it (an endless line came out as 7 pieces with repeated text).
  let draining = false;
  // Stryker disable next-line BooleanLiteral: equivalent as `true`: the drain() at the end, before anything can schedule, sets it false
  let scheduled = false;
  const buf = Buffer.allocUnsafe(CHUNK);

  const open = (): boolean => {
    if (fd !== null) return true;
    try {
      // O_NONBLOCK: a FIFO put there must not block; only a regular file is followed.
      fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      if (!fstatSync(fd).isFile()) {
        closeSync(fd);
        fd = null;
        return false;
      }
    } catch {
      // Stryker disable next-line BooleanLiteral: equivalent as `true`: a failed open leaves fd null, and drain() returns on `fd === null` as on false
      return false;
    }
    try {
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent: the poll's interval keeps the process alive exactly as long (until stop(), which closes both)
      watcher = watch(path, { persistent: false }, () => schedule());
      watcher.on('error', () => {
        watcher?.close();
        watcher = null;
      });
    } catch {
      watcher = null; // the poll still works
    }
    return true;
  };

  // Only new text is searched for newlines, and a line longer than MAX_LINE is passed on in
  // pieces: a log that is one endless line costs neither quadratic time nor unbounded memory.
  const deliver = (text: string) => {
    let from = 0;
    let nl = text.indexOf('\n');
    while (nl >= 0) {
      const line = (pending + text.slice(from, nl)).replace(/\r$/, '');
      pending = '';
      from = nl + 1;
      for (let i = 0; i < line.length || i === 0; i += MAX_LINE) {
        onLine(line.length > MAX_LINE ? line.slice(i, i + MAX_LINE) : line);
        if (stopped) return;
        if (line.length <= MAX_LINE) break;
      }
      nl = text.indexOf('\n', from);
    }
    pending += text.slice(from);
    // Strictly longer: a line of exactly MAX_LINE waits for its newline and is passed whole (a
    // piece cut at its very end would be followed by an empty line when the newline comes).
    while (pending.length > MAX_LINE) {
      onLine(pending.slice(0, MAX_LINE));
      pending = pending.slice(MAX_LINE);
      // Stryker disable next-line ConditionalExpression: equivalent: pending is at most MAX_LINE plus one chunk, so this loop runs at most once per call and nothing follows it
      if (stopped) return;
    }
  };

  const drain = () => {
    scheduled = false;
    if (draining || stopped || !open() || fd === null) return;
    draining = true;
    try {
      const size = fstatSync(fd).size;
      if (size < offset) {
        // truncated: start over
        offset = 0;
        pending = '';
        decoder = new StringDecoder('utf8');
      }
      while (!stopped) {
        const n = readSync(fd, buf, 0, CHUNK, offset);
        if (n <= 0) break;
        offset += n;
        deliver(decoder.write(buf.subarray(0, n)));
      }
    } catch {
      // the file vanished or fd closed underneath: the next poll reopens nothing; stop quietly
    } finally {
      draining = false;
    }
  };

  const schedule = () => {
    // Stryker disable next-line LogicalOperator: equivalent: only saves work; an extra drain() reads nothing new, and one after stop() returns at once
    if (scheduled || stopped) return;
    // Stryker disable next-line BooleanLiteral: equivalent for the same reason (more drains, the same lines)
    scheduled = true;
    setImmediate(drain);
  };

  // Keeps the process alive while following (stop() releases it).
  const timer = setInterval(drain, opts.pollMs ?? 100);
  drain();

  return {
    drain,
    stop() {
      // Stryker disable next-line ConditionalExpression: equivalent: a second stop() drains nothing (stopped), and pending and the decoder are already empty
      if (stopped) return;
      const fromListener = draining;
      drain();
      stopped = true;
      clearInterval(timer);
      watcher?.close();
      if (fd !== null) closeSync(fd);
      fd = null;
      const rest = fromListener ? '' : (pending + decoder.end()).replace(/\r$/, '');
      // Stryker disable next-line StringLiteral: equivalent: nothing reads pending after stop() (drain() returns on stopped)
      pending = '';
      if (rest !== '') onLine(rest);
    },
    get offset() {
      return offset;
    },
  };
}
