import { afterEach, describe, expect, it } from 'vitest';
import { appendFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { logFiles } from '../../helpers/log-files.js';
import { MAX_LINE, readAllLines, tailFile } from '../../../src/run/log-read.js';
import { followFile, type Follower } from '../../../src/run/follow.js';

// What `logs` and `up`'s live view show of a log's edges: Windows line ends, empty lines, a line of
// exactly the longest length passed whole, a file that does not exist, a read asked to stop, a log
// truncated under a follower.

const h = logFiles('dd-loglines-');
const { file } = h;

async function all(text: string, includePartial = true, o: { offset?: number; stop?: () => boolean } = {}) {
  const lines: string[] = [];
  const end = await readAllLines(file(text), (l) => void lines.push(...l), includePartial, o);
  return { lines, end };
}
async function tail(text: string, n: number, includePartial: boolean) {
  const lines: string[] = [];
  const end = await tailFile(file(text), n, includePartial, (l) => void lines.push(...l));
  return { lines, end };
}

describe('reading a log whole (logs)', () => {
  it('CRLF line ends are removed, a carriage return inside a line is kept, empty lines are lines', async () => {
    expect((await all('a\r\n\r\nb\rc\n\nlast\r')).lines).toEqual(['a', '', 'b\rc', '', 'last']);
  });

  it('a line of exactly the longest length is passed whole; one character more comes in two pieces', async () => {
    const exact = 'x'.repeat(MAX_LINE);
    expect((await all(`${exact}\n`)).lines.map((l) => l.length)).toEqual([MAX_LINE]);
    expect((await all(`${exact}y\n\nz\n`)).lines.map((l) => l.length)).toEqual([MAX_LINE, 1, 0, 1]);
    // Without a newline yet: the full pieces are passed on as they are read, the rest only at the end.
    const r = await all(`${exact}${exact}ab`, false);
    expect(r.lines.map((l) => l.length)).toEqual([MAX_LINE, MAX_LINE]);
    expect(r.end).toBe(2 * MAX_LINE);
  });

  it('from an offset: only what follows it', async () => {
    expect(await all('skipped\nkept\n', true, { offset: 8 })).toEqual({ lines: ['kept'], end: 13 });
  });

  it('asked to stop before reading anything: nothing passed on, the offset where it started', async () => {
    expect(await all('a\nb\n', true, { offset: 2, stop: () => true })).toEqual({ lines: [], end: 2 });
  });

  it('a log that does not exist is "no log" (null), for reading and tailing alike', async () => {
    const missing = join(h.dir, 'never-written.log');
    expect(await readAllLines(missing, () => {}, true)).toBeNull();
    expect(await tailFile(missing, 5, true, () => {})).toBeNull();
  });

  it('an empty log: no lines, offset 0', async () => {
    expect(await all('')).toEqual({ lines: [], end: 0 });
  });
});

describe('the last lines of a log (logs -n)', () => {
  it('exactly as many lines as asked for when the file holds exactly that many', async () => {
    expect(await tail('a\nb\nc\n', 3, false)).toEqual({ lines: ['a', 'b', 'c'], end: 6 });
    expect(await tail('a\nb\nc', 3, true)).toEqual({ lines: ['a', 'b', 'c'], end: 5 });
  });

  it('-n 0 while a line is being written: nothing shown, following starts before that line (or after it, when it is to be shown)', async () => {
    expect(await tail('a\nb\nhal', 0, false)).toEqual({ lines: [], end: 4 });
    expect(await tail('a\nb\nhal', 0, true)).toEqual({ lines: [], end: 7 });
    expect(await tail('hal', 0, false)).toEqual({ lines: [], end: 0 });
  });

  it('CRLF logs: the last lines without their carriage returns', async () => {
    expect((await tail('a\r\nb\r\nc\r\n', 2, false)).lines).toEqual(['b', 'c']);
  });
});

describe('following a log (up\'s live view)', () => {
  const followers: Follower[] = [];
  afterEach(() => followers.splice(0).forEach((f) => f.stop()));

  function follow(path: string, opts: { offset?: number; pollMs?: number } = {}, onLine?: (l: string, f: Follower) => void) {
    const lines: string[] = [];
    let f: Follower | null = null;
    f = followFile(path, (l) => {
      lines.push(l);
      onLine?.(l, f!);
    }, opts);
    followers.push(f);
    return { f, lines };
  }

  it('CRLF line ends are removed, a carriage return inside a line is kept, empty lines are lines', () => {
    const { f, lines } = follow(file('a\r\n\r\nb\rc\n\nlast\r'));
    f.stop();
    expect(lines).toEqual(['a', '', 'b\rc', '', 'last']);
  });

  it('a line of exactly the longest length is passed whole; longer ones in pieces; a piece ends a line only at its newline', () => {
    const exact = 'x'.repeat(MAX_LINE);
    const { f, lines } = follow(file(`${exact}\n${exact}yz\n\nend`));
    expect(lines.map((l) => l.length)).toEqual([MAX_LINE, MAX_LINE, 2, 0]);
    f.stop();
    expect(lines.at(-1)).toBe('end');
  });

  // The text arrives after followFile() returned, so the listener holds the follower it stops
  // (a stop during followFile's own first read would reach no follower yet).
  it('a listener that stops the follower gets no further line, not even the partial last one', () => {
    const path = file('');
    const { f, lines } = follow(path, {}, (l, g) => {
      if (l === 'two') g.stop();
    });
    appendFileSync(path, 'one\ntwo\nthree\nfour');
    f.drain();
    expect(lines).toEqual(['one', 'two']);
  });

  it('a listener that stops it in the middle of an endless line gets no further piece', () => {
    const path = file('');
    const { f, lines } = follow(path, {}, (_l, g) => g.stop());
    appendFileSync(path, 'x'.repeat(3 * MAX_LINE + 5));
    f.drain();
    expect(lines.map((l) => l.length)).toEqual([MAX_LINE]);
  });

  it('stop() twice delivers the final partial line once; drain() after stop() reads nothing', () => {
    const path = file('whole\npart');
    const { f, lines } = follow(path);
    f.stop();
    f.stop();
    appendFileSync(path, 'more\n');
    f.drain();
    expect(lines).toEqual(['whole', 'part']);
  });

  it('from an offset: only what follows it, and the offset moves with what was read', () => {
    const path = file('skipped\nkept\n');
    const { f, lines } = follow(path, { offset: 8 });
    expect(lines).toEqual(['kept']);
    expect(f.offset).toBe(13);
  });

  it('a log truncated underneath (a new run reusing it): read again from the start', () => {
    const path = file('old line one\nold line two\n');
    const { f, lines } = follow(path, { pollMs: 60_000 });
    truncateSync(path, 0);
    appendFileSync(path, 'new\n');
    f.drain();
    expect(lines).toEqual(['old line one', 'old line two', 'new']);
    expect(f.offset).toBe(4);
  });

  it('a truncation in the middle of a partial line drops the old partial', () => {
    const path = file('old partial');
    const { f, lines } = follow(path, { pollMs: 60_000 });
    truncateSync(path, 0);
    appendFileSync(path, 'fresh\n');
    f.drain();
    expect(lines).toEqual(['fresh']);
  });

  it('without fs.watch events the poll still delivers, at its interval', async () => {
    const path = join(h.dir, 'late.log');
    let delivered = () => {};
    const first = new Promise<void>((r) => (delivered = r));
    const { lines } = follow(path, { pollMs: 20 }, () => delivered());
    writeFileSync(path, 'late\n'); // created after the follower started: no watch on it yet
    await first;
    expect(lines).toEqual(['late']);
  });
});
