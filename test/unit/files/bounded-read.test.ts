import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBounded, readBoundedSync, sizeText } from '../../../src/host/files/bounded-read.js';

// The one reader of files we did not write: FIFOs, links, devices, folders and huge files are
// refused without blocking and without reading them; a small regular file is read whole.

const dir = mkdtempSync(join(tmpdir(), 'dd-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);
writeFileSync(at('small'), 'héllo');
writeFileSync(at('exact'), 'x'.repeat(64));
writeFileSync(at('over'), 'x'.repeat(65));
truncateSync(at('over'), 65);
writeFileSync(at('huge'), '');
truncateSync(at('huge'), 1024 ** 3); // sparse: 1 GiB said, nothing on disk
execFileSync('mkfifo', [at('fifo')]);
symlinkSync(at('small'), at('link'));

describe.each([['readBounded', readBounded], ['readBoundedSync', async (p: string, o: { maxBytes: number; follow?: boolean }) => readBoundedSync(p, o)]] as const)('%s', (_name, read) => {
  it('a small regular file: its text; exactly at the bound: read; one byte over: refused unread', async () => {
    expect(await read(at('small'), { maxBytes: 64 })).toEqual({ ok: true, text: 'héllo', bytes: 6 });
    expect(await read(at('exact'), { maxBytes: 64 })).toMatchObject({ ok: true, bytes: 64 });
    expect(await read(at('over'), { maxBytes: 64 })).toEqual({ ok: false, why: 'too-large', size: 65, message: 'is 65 bytes, more than the 64 bytes read at most' });
  });

  it('a FIFO with no writer: refused at once, not waited on', async () => {
    const t0 = Date.now();
    expect(await read(at('fifo'), { maxBytes: 64 })).toEqual({ ok: false, why: 'not-a-file', message: 'is a named pipe (FIFO), not a regular file' });
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('1 GiB: refused by its size, nothing read; /dev/zero and /proc files: not regular files, or empty-sized ones read within the bound', async () => {
    const t0 = Date.now();
    expect(await read(at('huge'), { maxBytes: 16 * 1024 ** 2 })).toMatchObject({ ok: false, why: 'too-large', message: 'is 1.0 GiB, more than the 16.0 MiB read at most' });
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await read('/dev/zero', { maxBytes: 64 })).toMatchObject({ ok: false, why: 'not-a-file' });
    // /proc files say size 0 and are regular: the bound still holds while reading.
    const r = await read('/proc/self/status', { maxBytes: 16 });
    expect(r).toMatchObject({ ok: false, why: 'too-large' });
  });

  it('a symbolic link is not followed unless asked (HF snapshots are links by design); a folder and a missing file are said', async () => {
    expect(await read(at('link'), { maxBytes: 64 })).toEqual({ ok: false, why: 'link', message: 'is a symbolic link, which is not followed' });
    expect(await read(at('link'), { maxBytes: 64, follow: true })).toMatchObject({ ok: true, text: 'héllo' });
    expect(await read(dir, { maxBytes: 64 })).toMatchObject({ ok: false, why: 'not-a-file', message: 'is a folder, not a file' });
    expect(await read(at('none'), { maxBytes: 64 })).toMatchObject({ ok: false, why: 'absent' });
  });
});

it('sizeText', () => {
  expect([sizeText(300), sizeText(12 * 1024), sizeText(17 * 1024 ** 2), sizeText(1024 ** 3)]).toEqual(['300 bytes', '12 KiB', '17.0 MiB', '1.0 GiB']);
});
