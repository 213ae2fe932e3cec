import { spawn } from 'node:child_process';
import { closeSync, constants as fsConstants, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { readStartTicks } from './proc.js';

// Every child leads its own process group (detached: setsid), so one group signal reaches vLLM's
// EngineCore grandchildren. Output goes straight to the log file through inherited descriptors:
// nothing passes through us, so logs keep filling if the supervisor dies or detaches.

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** The spawn itself failed (interpreter not found...). */
  error: string | null;
}

export interface Spawned {
  pid: number | null;
  pgid: number | null;
  startTicks: number | null;
  startedAt: string;
  exited: Promise<ExitInfo>;
  /** Lets the supervisor exit while the child runs on (--detach). */
  unref(): void;
}

export function spawnLogged(argv: string[], env: NodeJS.ProcessEnv, logFile: string): Spawned {
  mkdirSync(dirname(logFile), { recursive: true });
  const startedAt = new Date().toISOString();
  const fd = openLog(logFile);
  if (typeof fd === 'string') {
    return { pid: null, pgid: null, startTicks: null, startedAt, exited: Promise.resolve({ code: null, signal: null, error: fd }), unref() {} };
  }
  let child;
  try {
    child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', fd, fd], env });
  } catch (err) {
    writeSync(fd, `dynamo-dev: cannot start ${argv[0]}: ${(err as Error).message}\n`);
    closeSync(fd);
    return { pid: null, pgid: null, startTicks: null, startedAt, exited: Promise.resolve({ code: null, signal: null, error: (err as Error).message }), unref() {} };
  }
  const pid = child.pid ?? null;
  const startTicks = pid !== null ? readStartTicks(pid) : null;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (pid === null) {
        try {
          const efd = openLog(logFile);
          if (typeof efd === 'string') throw new Error(efd);
          writeSync(efd, `dynamo-dev: cannot start ${argv[0]}: ${err.code === 'ENOENT' ? 'no such program (not found on PATH)' : err.message}\n`);
          closeSync(efd);
        } catch { /* the log dir vanished; the event still says why */ }
        resolve({ code: null, signal: null, error: `cannot start ${argv[0]}: ${err.code === 'ENOENT' ? 'no such program (not found on PATH)' : err.message}` });
      }
    });
    child.once('exit', (code, signal) => resolve({ code, signal, error: null }));
  });
  closeSync(fd); // the child holds its own copy
  return { pid, pgid: pid, startTicks, startedAt, exited, unref: () => child.unref() };
}

/**
 * The log opened for appending without blocking or following a link (a FIFO put where a log was,
 * by a restart's time, would block the supervisor's whole event loop on a plain open), and only when
 * it is a regular file: the descriptor, or why not (the process is then not started).
 */
function openLog(logFile: string): number | string {
  let fd: number;
  try {
    fd = openSync(logFile, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NONBLOCK | fsConstants.O_NOFOLLOW, 0o666);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENXIO: a FIFO nobody reads; ELOOP: a symbolic link.
    const what = code === 'ENXIO' ? 'is a named pipe (FIFO), not a regular file' : code === 'ELOOP' ? 'is a symbolic link, which is not followed' : `cannot be opened (${code ?? (err as Error).message})`;
    return `its log ${logFile} ${what}; nothing started`;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    return `its log ${logFile} is not a regular file; nothing started`;
  }
  return fd;
}
