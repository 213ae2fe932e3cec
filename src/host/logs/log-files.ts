import { isatty } from 'node:tty';
import { readdirSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { join, resolve, dirname } from 'node:path';
import { UserError } from '../../errors.js';
import { errnoText } from '../files/errno-text.js';
import { kernelFs } from '../files/kernel-fs.js';

// Which files a scan reads: the paths named (a missing or unreadable one said by name), folders
// walked for log names, pipes read only where they end. log-scan.ts reads what this finds.

/** How long walking a folder may hold the event loop before it yields (as log-scan.ts's small files). */
const YIELD_MS = 8;

/** Files taken from folders: logs, rotated logs, and their .gz. Files named directly are always scanned. */
const LOG_NAME = /\.(?:log|txt|jsonl|out|err)(?:\.\d+)?(?:\.gz)?$/i;
/** LOG_NAME for people. */
export const LOG_NAMES_TEXT = '*.log, *.txt, *.jsonl, *.out, *.err, rotated (*.log.1) and gzipped (*.log.gz)';

/**
 * stat of a log path the user named; a missing or unreadable one is a UserError naming it (null
 * with missingOk for a missing one). `hint` is added to the "no such" message.
 */
export async function statLogPath(path: string, o: { missingOk?: boolean; label?: string; hint?: string; pipes?: boolean } = {}): Promise<Stats | null> {
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
  if (!st.isFile() && !st.isDirectory() && !(o.pipes && st.isFIFO() && isAnonymousPipe(path))) {
    // /dev/stdin on a terminal is the terminal itself: reading it would wait for typing.
    const tty = st.isCharacterDevice() && /^\/dev\/(?:stdin|fd\/0)$/.test(path) && isatty(0) ? ' (standard input is a terminal here: pipe a log into it, e.g. cat worker.log | dynamo-dev diagnose /dev/stdin)' : '';
    throw new UserError(`${o.label ?? ''}${path}: ${kindOf(st)}, not a log file${tty}; pass log files or folders`);
  }
  // /proc and /sys hold no logs: walking /proc follows /proc/N/root into the whole machine (raw
  // EACCES halfway), and a file like /proc/kmsg blocks its reader.
  const kernel = st.isFIFO() ? null : kernelFs(path);
  if (kernel) throw new UserError(`${o.label ?? ''}${path}: is on the kernel's ${kernel} file system, which holds no logs; pass log files or folders`);
  return st;
}

/**
 * `/dev/stdin` fed by a pipe and bash's `<(...)` (/dev/fd/63) lead through /proc/self/fd to a
 * `pipe:[N]` link: a pipe with a writer, which ends when the writer does. A FIFO made by mkfifo may
 * never get a writer (opening it would wait forever), so only the former is read.
 */
function isAnonymousPipe(path: string): boolean {
  let at = path;
  for (let hop = 0; hop < 8; hop++) {
    let target: string;
    try {
      target = readlinkSync(at);
    } catch {
      return false;
    }
    if (/^pipe:\[\d+\]$/.test(target)) return true;
    at = resolve(dirname(at), target);
  }
  return false;
}

/** What a path that is not a regular file is, for people. */
export function kindOf(st: Stats): string {
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

export async function expand(path: string, opts: { missingOk?: boolean; pipes?: boolean }, pipes: Set<string>): Promise<string[]> {
  const st = await statLogPath(path, { missingOk: opts.missingOk, pipes: opts.pipes });
  if (!st) return [];
  if (st.isFIFO()) pipes.add(path);
  if (st.isDirectory()) {
    const out: string[] = [];
    await walk(path, await realpath(path), out);
    return out;
  }
  return [path];
}

/**
 * Depth-first, names sorted, symlinks followed once (a link loop is visited once). Sync calls
 * (a promise round trip per folder cost more than listing it), yielding every few milliseconds.
 */
async function walk(dir: string, realDir: string, out: string[]): Promise<void> {
  const visited = new Set([realDir]);
  let slice = performance.now();
  // realD: d's real path, so a folder that is no symlink needs no realpath call of its own.
  const visit = async (d: string, realD: string): Promise<void> => {
    let listed;
    try {
      listed = readdirSync(d, { withFileTypes: true });
    } catch (err) {
      throw new UserError(`${d}: cannot read this folder (${errnoText((err as NodeJS.ErrnoException).code)}); pass log files or folders you can read`);
    }
    const entries = listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = join(d, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        let st: Stats;
        try {
          st = statSync(p);
        } catch {
          continue;
        }
        isDir = st.isDirectory();
        isFile = st.isFile();
      }
      if (isDir) {
        let real = join(realD, e.name);
        if (e.isSymbolicLink()) {
          try {
            real = realpathSync.native(p);
          } catch {
            continue; // vanished
          }
          // A link into /proc or /sys leads to no logs, and through /proc/N/root to everything.
          if (kernelFs(real)) continue;
        }
        if (visited.has(real)) continue;
        visited.add(real);
        if (performance.now() - slice > YIELD_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          slice = performance.now();
        }
        await visit(p, real);
      } else if (isFile && LOG_NAME.test(e.name)) {
        out.push(p);
      }
    }
  };
  await visit(dir, realDir);
}
