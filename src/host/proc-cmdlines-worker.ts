// Worker thread entry of a shared command-line read (proc-cmdlines.ts readCmdlines): takes blocks of
// pids from the counter it shares with the main thread until none are left, answers with what it
// read, and ends. A failure ends the thread without an answer; the main thread reads its blocks.
import { parentPort, workerData } from 'node:worker_threads';
import { readClaimedBlocks, type CmdlineClaims } from './proc-cmdlines.js';

parentPort?.postMessage(readClaimedBlocks(workerData as CmdlineClaims));
