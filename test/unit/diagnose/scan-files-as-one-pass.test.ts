import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SAMPLES } from '../../helpers/cli.js';
import { scanText } from '../../../src/diagnose/scanner.js';
import { scanPaths } from '../../../src/host/logs/log-scan.js';
import { mulberry32 } from '../../../src/probe/random.js';

// A file is read in 512 KiB chunks into the WebAssembly scan's buffers; a line cut by a chunk's end
// is carried over and scanned from a copy (up to 64 KiB) or in JavaScript (longer). Wherever the
// cuts fall, the scan must find what one pass over the whole text finds: same findings, counts,
// first lines, quotes, KV size, line count.

const dir = mkdtempSync(join(tmpdir(), 'dd-scan-random-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LOGS = join(SAMPLES, 'logs');
const SAMPLE_LINES = readdirSync(LOGS).filter((f) => f.endsWith('.log')).flatMap((f) => readFileSync(join(LOGS, f), 'utf8').split('\n').filter(Boolean));

/** ~1.6 MB of sample lines, filler, CRLF endings, multi-byte text and a few long lines (some longer than 64 KiB), with or without a final newline. */
function randomLog(seed: number): string {
  const next = mulberry32(seed);
  const out: string[] = [];
  let size = 0;
  while (size < 1_600_000) {
    const r = next();
    let line: string;
    if (r < 0.5) line = SAMPLE_LINES[Math.floor(next() * SAMPLE_LINES.length)];
    else if (r < 0.8) line = `INFO 12-02 05:10:00 [x.py:1] ordinary line ${Math.floor(next() * 1e6)} é 漢`;
    else if (r < 0.9) line = `${SAMPLE_LINES[Math.floor(next() * SAMPLE_LINES.length)]}\r`;
    else if (r < 0.995) line = '';
    else line = `${'y'.repeat(Math.floor(next() * 150_000))} ${SAMPLE_LINES[Math.floor(next() * SAMPLE_LINES.length)]}`;
    out.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  return out.join('\n') + (next() < 0.5 ? '\n' : '');
}

describe('a file scanned chunk by chunk reads as one pass', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`random log ${seed}`, async () => {
      const text = randomLog(seed);
      const file = join(dir, `random-${seed}.log`);
      writeFileSync(file, text);
      const one = scanText(file, text);
      expect(one.findings.length).toBeGreaterThan(3);
      expect(await scanPaths([file])).toEqual(one);
    });
  }
});
