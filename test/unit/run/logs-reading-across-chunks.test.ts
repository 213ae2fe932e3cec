import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { logFiles } from '../../helpers/log-files.js';
import { readAllLines, tailFile } from '../../../src/run/log-read.js';

// `logs` on logs bigger than one read (64 KiB): `-n` reaching back over several reads counts only
// the newlines really in the file, an empty first line is a line, `logs | head` going away mid-file
// resumes after the last whole line passed on, and no read leaves the log open.

const CHUNK = 64 * 1024;
const { file } = logFiles('dd-logchunks-');
/** Lines of 10 bytes ("000000001\n" ...), numbered from 1. */
const numbered = (count: number) => Array.from({ length: count }, (_, i) => `${String(i + 1).padStart(9, '0')}\n`).join('');
const openFds = () => readdirSync('/proc/self/fd').length;

describe('the last lines of a log bigger than one read', () => {
  it('asking for more lines than it holds shows every line, the first one included', async () => {
    // 6,564 lines: the first read backwards is one full chunk, the second the 104 bytes before it.
    const text = numbered(6564);
    expect(text.length).toBe(CHUNK + 104);
    const lines: string[] = [];
    const end = await tailFile(file(text), 1_000_000, false, (l) => void lines.push(...l));
    expect(lines).toHaveLength(6564);
    expect(lines[0]).toBe('000000001');
    expect(lines.at(-1)).toBe('000006564');
    expect(end).toBe(text.length);
  });

  it('exactly the lines asked for, reaching into the earlier read', async () => {
    const text = numbered(6564);
    const lines: string[] = [];
    await tailFile(file(text), 6560, false, (l) => void lines.push(...l));
    expect(lines[0]).toBe('000000005');
    expect(lines).toHaveLength(6560);
  });

  it('a log that starts with an empty line: that line counts', async () => {
    const path = file('\nb\nc\n');
    const two: string[] = [];
    await tailFile(path, 2, false, (l) => void two.push(...l));
    expect(two).toEqual(['b', 'c']);
    const three: string[] = [];
    await tailFile(path, 3, false, (l) => void three.push(...l));
    expect(three).toEqual(['', 'b', 'c']);
  });
});

describe('a reader that goes away mid-file (logs | head)', () => {
  it('the offset returned is right after the last whole line passed on', async () => {
    // The first read ends 6 bytes into line 6,554.
    const text = numbered(7000);
    const lines: string[] = [];
    const end = await readAllLines(file(text), (l) => void lines.push(...l), true, { stop: () => lines.length > 0 });
    expect(lines).toHaveLength(6553);
    expect(end).toBe(6553 * 10);
    expect(text.slice(end!, end! + 10)).toBe('000006554\n');
  });
});

describe('no read leaves the log open', () => {
  it('reading whole and tailing close what they opened', async () => {
    const path = file(numbered(100));
    const fds = openFds();
    await readAllLines(path, () => {}, true);
    await tailFile(path, 5, false, () => {});
    await tailFile(path, 0, false, () => {});
    expect(openFds()).toBe(fds);
  });
});
