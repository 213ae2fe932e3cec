import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
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
  const fd = openSync(logFile, 'a');
  const startedAt = new Date().toISOString();
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
          const efd = openSync(logFile, 'a');
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
