import { afterEach, describe, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { followFile, type Follower } from '../../../src/run/follow.js';
import { MAX_LINE } from '../../../src/run/log-read.js';

const dirs: string[] = [];
const followers: Follower[] = [];
afterEach(() => {
  followers.splice(0).forEach((f) => f.stop());
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'dd-follow-'));
  dirs.push(dir);
  const path = join(dir, 'w.log');
  const lines: string[] = [];
  const waiters: [(l: string) => boolean, () => void][] = [];
  const onLine = (l: string) => {
    lines.push(l);
    for (const w of [...waiters]) if (w[0](l)) { waiters.splice(waiters.indexOf(w), 1); w[1](); }
  };
  const until = (pred: (l: string) => boolean) => new Promise<void>((r) => (lines.some(pred) ? r() : waiters.push([pred, r])));
  return { path, lines, onLine, until };
}

describe('followFile', () => {
  it('delivers whole lines as the file grows, holding a partial line until its newline', async () => {
    const s = setup();
    writeFileSync(s.path, 'first\nsec');
    const f = followFile(s.path, s.onLine);
    followers.push(f);
    expect(s.lines).toEqual(['first']);
    appendFileSync(s.path, 'ond\r\nthird\n');
    await s.until((l) => l === 'third');
    expect(s.lines).toEqual(['first', 'second', 'third']);
  });

  it('waits for a file that does not exist yet', async () => {
    const s = setup();
    const f = followFile(s.path, s.onLine, { pollMs: 20 });
    followers.push(f);
    writeFileSync(s.path, 'GPU KV cache size: 14,816 tokens\n');
    await s.until((l) => l.includes('KV cache'));
    expect(s.lines).toHaveLength(1);
  });

  it('sees a line within milliseconds (fs.watch), not at the poll interval', async () => {
    const s = setup();
    writeFileSync(s.path, '');
    const f = followFile(s.path, s.onLine, { pollMs: 5000 });
    followers.push(f);
    const t0 = performance.now();
    appendFileSync(s.path, 'ready\n');
    await s.until((l) => l === 'ready');
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('stop() delivers a final partial line and keeps multi-byte characters whole across reads', async () => {
    const s = setup();
    writeFileSync(s.path, 'größe ✓\nend');
    const f = followFile(s.path, s.onLine);
    f.stop();
    expect(s.lines).toEqual(['größe ✓', 'end']);
  });
});

describe('followFile on a hostile log (issue 12, cause 10)', () => {
  it('a line without end arrives in MAX_LINE pieces as it grows (memory bounded, each byte searched once), nothing lost', async () => {
    const s = setup();
    writeFileSync(s.path, 'start\n');
    const f = followFile(s.path, s.onLine, { pollMs: 10 });
    followers.push(f);
    const piece = 'x'.repeat(64 * 1024);
    const t0 = performance.now();
    for (let i = 0; i < 64; i++) {
      appendFileSync(s.path, piece); // 4 MiB in 64 KiB writes, no newline
      f.drain();
    }
    appendFileSync(s.path, 'tail\n');
    f.drain();
    await s.until((l) => l.endsWith('tail'));
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(s.lines[0]).toBe('start');
    expect(s.lines.slice(1).map((l) => l.length)).toEqual([MAX_LINE, MAX_LINE, MAX_LINE, MAX_LINE, 4]);
    expect(s.lines.slice(1).join('')).toBe(`${'x'.repeat(4 * MAX_LINE)}tail`);
  });
});
