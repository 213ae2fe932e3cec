import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAMPLES, tempHome } from '../../helpers/cli.js';
import { MAX_LINE, readAllLines, tailFile } from '../../../src/run/log-read.js';

const h = tempHome('dd-logread-');
afterAll(() => h.cleanup());
const real = readFileSync(join(SAMPLES, 'logs', 'worker-agg-ready.log'), 'utf8');

let files = 0;
/** tailFile of a file holding `text`: the lines passed on and the offset returned. */
async function tail(text: string, n: number, includePartial: boolean, path?: string): Promise<{ lines: string[]; end: number | null }> {
  const p = path ?? join(h.dir, `t${files++}.log`);
  if (!path) writeFileSync(p, text);
  const lines: string[] = [];
  const end = await tailFile(p, n, includePartial, (l) => void lines.push(...l));
  return { lines, end };
}

describe('tailFile', () => {
  it('the last n complete lines; fewer when the file has fewer; none for 0', async () => {
    expect(await tail('a\nb\nc\n', 2, true)).toEqual({ lines: ['b', 'c'], end: 6 });
    expect((await tail('a\nb\nc\n', 5, true)).lines).toEqual(['a', 'b', 'c']);
    expect(await tail('a\nb\n', 0, true)).toEqual({ lines: [], end: 4 });
    expect((await tail('', 3, true)).lines).toEqual([]);
  });
  it('a partial last line (still being written) is printed, or left for the follower (the offset stops before it)', async () => {
    expect(await tail('a\nb\nhalf é', 2, true)).toEqual({ lines: ['b', 'half é'], end: 11 });
    expect(await tail('a\nb\nhalf é', 2, false)).toEqual({ lines: ['a', 'b'], end: 4 });
    expect(await tail('a\nb\nhalf é', 0, false)).toEqual({ lines: [], end: 4 });
    expect((await tail('a\r\nb\r\n', 1, true)).lines).toEqual(['b']);
  });
});

describe('tailFile / readAllLines on a real worker log', () => {
  const path = join(h.dir, 'worker.log');
  writeFileSync(path, real);
  const lines = real.replace(/\n$/, '').split('\n');

  it('tailFile gives the same last lines as reading everything', async () => {
    for (const n of [1, 3, lines.length, lines.length + 5]) {
      expect((await tail('', n, true, path)).lines).toEqual(lines.slice(-n));
    }
    expect((await tail('', 2, true, path)).end).toBe(Buffer.byteLength(real));
    expect((await tail('', 2, true, join(h.dir, 'missing.log'))).end).toBeNull();
  });

  it('tailFile across 64 KiB chunk boundaries and multi-byte characters', async () => {
    const big = join(h.dir, 'big.log');
    const many = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'é'.repeat(i % 50)}`);
    writeFileSync(big, `${many.join('\n')}\n`);
    expect((await tail('', 1234, true, big)).lines).toEqual(many.slice(-1234));
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

describe('long lines and early stops', () => {
  it('a line longer than MAX_LINE arrives in MAX_LINE pieces, nothing lost, from readAllLines and tailFile alike', async () => {
    const p = join(h.dir, 'long.log');
    const long = 'x'.repeat(MAX_LINE * 2 + 10);
    writeFileSync(p, `first\n${long}\nlast\n`);
    const all: string[] = [];
    await readAllLines(p, (l) => void all.push(...l), true);
    expect(all.map((l) => l.length)).toEqual([5, MAX_LINE, MAX_LINE, 10, 4]);
    expect(all.join('')).toBe(`first${long}last`);
    const t = await tail('', 2, true, p);
    expect(t.lines.join('')).toBe(`${long}last`);
    expect(Math.max(...t.lines.map((l) => l.length))).toBe(MAX_LINE);
  });

  it('stop() ends the read after the current batch', async () => {
    const p = join(h.dir, 'stop.log');
    writeFileSync(p, Array.from({ length: 100_000 }, (_, i) => `line ${i}`).join('\n'));
    let batches = 0;
    await readAllLines(p, () => void batches++, true, { stop: () => batches >= 1 });
    expect(batches).toBe(1);
  });

  it('refuses a file that is not a regular one (a device would never end)', async () => {
    await expect(readAllLines('/dev/zero', () => {}, true)).rejects.toThrow(/not a regular file/);
  });
});
