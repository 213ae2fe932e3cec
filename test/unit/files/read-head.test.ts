import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readHead } from '../../../src/host/files/read-head.js';

// readHead reads the first bytes of a file we did not write (a worker's log for probe's worker
// names, aiperf on PATH for its interpreter): a FIFO is refused without blocking (issue 29: it was
// opened blocking and waited for a writer for good), /dev/zero and /proc files are no regular
// files, a 1 GiB file costs `limit` bytes.

const dir = mkdtempSync(join(tmpdir(), 'dd-read-head-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readHead', () => {
  it('a regular file: its first bytes; a file smaller than the limit whole', async () => {
    writeFileSync(join(dir, 'a'), '#!/usr/bin/python3\nrest');
    expect(await readHead(join(dir, 'a'), 5)).toBe('#!/us');
    expect(await readHead(join(dir, 'a'), 1000)).toBe('#!/usr/bin/python3\nrest');
  });

  it('a FIFO without a writer: null at once; /dev/zero, a folder, a missing file: null', async () => {
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    expect(await readHead(join(dir, 'fifo'), 512)).toBeNull();
    expect(await readHead('/dev/zero', 512)).toBeNull();
    expect(await readHead(dir, 512)).toBeNull();
    expect(await readHead(join(dir, 'missing'), 512)).toBeNull();
  });

  it('a 1 GiB (sparse) file: only `limit` bytes', async () => {
    truncateSync(join(dir, 'a'), 1024 ** 3);
    expect((await readHead(join(dir, 'a'), 512))!.length).toBe(512);
  });
});
