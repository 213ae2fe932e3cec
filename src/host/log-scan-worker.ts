// Worker thread entry of a split scan (log-scan.ts scanPlain): scans a file from a line start to its
// end and answers with what it found; the thread then ends. A failure ends the thread with an
// error, and the main thread reads that part itself (and reports the error the user should see).
import { parentPort, workerData } from 'node:worker_threads';
import { scanFileFrom } from './log-scan.js';

const { file, start } = workerData as { file: string; start: number };
parentPort?.postMessage(await scanFileFrom(file, start));
