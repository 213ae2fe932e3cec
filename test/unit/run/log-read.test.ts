import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAMPLES, tempHome } from '../../helpers/cli.js';
import { lastLines, readAllLines, tailFile } from '../../../src/run/log-read.js';

const h = tempHome('dd-logread-');
afterAll(() => h.cleanup());
const real = readFileSync(join(SAMPLES, 'logs', 'worker-agg-ready.log'), 'utf8');

describe('lastLines (pure)', () => {
  it('the last n complete lines; a fragment at the cut is dropped unless the text starts the file', () => {
    expect(lastLines('a\nb\nc\n', 2, true, true)).toEqual({ lines: ['b', 'c'], partialBytes: 0 });
    expect(lastLines('ment\nb\nc\n', 5, false, true).lines).toEqual(['b', 'c']);
    expect(lastLines('a\nb\nc\n', 5, true, true).lines).toEqual(['a', 'b', 'c']);
    expect(lastLines('a\nb\n', 0, true, true).lines).toEqual([]);
  });
  it('a partial last line (still being written) is printed, or left for the follower with its byte length', () => {
    expect(lastLines('a\nb\nhalf é', 2, true, true)).toEqual({ lines: ['b', 'half é'], partialBytes: 0 });
    expect(lastLines('a\nb\nhalf é', 2, true, false)).toEqual({ lines: ['a', 'b'], partialBytes: 7 });
    expect(lastLines('a\r\nb\r\n', 1, true, true).lines).toEqual(['b']);
  });
});

describe('tailFile / readAllLines on a real worker log', () => {
  const path = join(h.dir, 'worker.log');
  writeFileSync(path, real);
  const lines = real.replace(/\n$/, '').split('\n');

  it('tailFile gives the same last lines as reading everything', async () => {
    for (const n of [1, 3, lines.length, lines.length + 5]) {
      expect((await tailFile(path, n, true))!.lines).toEqual(lines.slice(-n));
    }
    expect((await tailFile(path, 2, true))!.end).toBe(Buffer.byteLength(real));
    expect(await tailFile(join(h.dir, 'missing.log'), 2, true)).toBeNull();
  });

  it('tailFile across 64 KiB chunk boundaries and multi-byte characters', async () => {
    const big = join(h.dir, 'big.log');
    const many = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'é'.repeat(i % 50)}`);
    writeFileSync(big, `${many.join('\n')}\n`);
    expect((await tailFile(big, 1234, true))!.lines).toEqual(many.slice(-1234));
    const all: string[] = [];
    expect(await readAllLines(big, (l) => void all.push(...l), true)).toBe(Buffer.byteLength(`${many.join('\n')}\n`));
    expect(all).toEqual(many);
  });

  it('readAllLines stops before a partial last line when following', async () => {
    const p = join(h.dir, 'partial.log');
    writeFileSync(p, 'one\ntwo\nthr');
    const got: string[] = [];
    expect(await readAllLines(p, (l) => void got.push(...l), false)).toBe(8);
    expect(got).toEqual(['one', 'two']);
  });
});
