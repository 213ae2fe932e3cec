import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { workerAnswer } from '../../../src/host/logs/worker-answer.js';

// A worker that cannot answer must never hang the command nor lose the work: the answer is then
// null and the caller does the work on its own thread.

const dir = mkdtempSync(join(tmpdir(), 'dd-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const worker = (name: string, body: string) => {
  const p = join(dir, name);
  writeFileSync(p, body);
  return pathToFileURL(p);
};

describe('a worker thread asked for one answer', () => {
  it('answers with its message, given its data', async () => {
    const url = worker('echo.mjs', "import { parentPort, workerData } from 'node:worker_threads';\nparentPort.postMessage({ got: workerData, pids: [1, 2] });\n");
    expect(await workerAnswer(url, { file: 'a.log', start: 7 }).answer).toEqual({ got: { file: 'a.log', start: 7 }, pids: [1, 2] });
  });

  it('null when its module is not there (the TypeScript sources have no built worker)', async () => {
    expect(await workerAnswer(pathToFileURL(join(dir, 'missing.js'))).answer).toBeNull();
  });

  it('null when it throws before answering', async () => {
    expect(await workerAnswer(worker('throws.mjs', "throw new Error('EACCES');\n")).answer).toBeNull();
  });

  it('null when it ends without answering', async () => {
    expect(await workerAnswer(worker('silent.mjs', 'export {};\n')).answer).toBeNull();
  });

  it('stopped at once: null, and a worker that would never end is ended', async () => {
    const forever = worker('forever.mjs', 'setInterval(() => {}, 1000);\n');
    const early = workerAnswer(forever);
    early.stop();
    expect(await early.answer).toBeNull();
    const running = workerAnswer(forever);
    await new Promise((r) => setImmediate(r)); // the thread has had a turn to start
    running.stop(); // without terminate() the answer would never settle (test timeout)
    expect(await running.answer).toBeNull();
  });
});
