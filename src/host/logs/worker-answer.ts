import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface WorkerAnswer<T> {
  answer: Promise<T | null>;
  stop: () => void;
}

/**
 * Runs a worker thread that answers with one message and ends (log-scan.ts: parts of a big log).
 * `answer` is null where none can run: its module is not there (the sources under test are .ts,
 * the workers are built .js), it failed to start, threw or ended without answering; the caller
 * then does the work itself. `stop()` ends it early (not wanted any more).
 */
export function workerAnswer<T>(url: URL, workerData?: unknown): WorkerAnswer<T> {
  let terminate = () => {};
  const stop = () => terminate();
  if (!existsSync(fileURLToPath(url))) return { answer: Promise.resolve(null), stop };
  // Started at once (not after an await): the worker needs ~60 ms to boot, and the caller's work
  // meanwhile is work it does not share.
  const answer = new Promise<T | null>((resolve) => {
    try {
      const worker = new Worker(url, { workerData });
      terminate = () => void worker.terminate();
      worker.once('message', (m: T) => resolve(m));
      worker.once('error', () => resolve(null));
      // Ended without answering; after the answer this resolve() does nothing.
      worker.once('exit', () => resolve(null));
    } catch {
      resolve(null);
    }
  });
  return { answer, stop };
}
