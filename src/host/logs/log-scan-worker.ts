// Worker thread entry of a shared scan (log-scan.ts scanPlain): takes parts of a big file from the
// counter it shares with the main thread until none are left, answers with what each part held,
// and ends. A failure ends the thread with an error, and the main thread reads the parts this
// thread took itself (and reports the error the user should see).
import { parentPort, workerData } from 'node:worker_threads';
import { scanParts, type ScanParts } from './log-scan.js';

parentPort?.postMessage(await scanParts(workerData as ScanParts));
