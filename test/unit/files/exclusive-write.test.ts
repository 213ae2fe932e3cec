import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unguessableTmp, writeWholeFile, writeWholeFileSync } from '../../../src/host/files/exclusive-write.js';

// Writing whole files: an unguessable temporary created exclusively, renamed over the target;
// a failure leaves no temporary of ours and removes nothing that was there.

const dir = mkdtempSync(join(tmpdir(), 'dd-excl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([['writeWholeFile', writeWholeFile], ['writeWholeFileSync', async (p: string, d: string) => writeWholeFileSync(p, d)]] as const)('%s', (_n, write) => {
  it('writes the target whole and leaves only it', async () => {
    const sub = mkdtempSync(join(dir, 'ok-'));
    await write(join(sub, 'a.json'), '{"a":1}');
    expect(readFileSync(join(sub, 'a.json'), 'utf8')).toBe('{"a":1}');
    expect(readdirSync(sub)).toEqual(['a.json']);
  });

  it('a rename that fails (a folder at the target) leaves no temporary behind and the folder as it was', async () => {
    const sub = mkdtempSync(join(dir, 'fail-'));
    mkdirSync(join(sub, 'a.json'));
    writeFileSync(join(sub, 'a.json', 'inside'), 'keep');
    await expect(write(join(sub, 'a.json'), 'x')).rejects.toMatchObject({ code: expect.stringMatching(/EISDIR|ENOTEMPTY|EEXIST/) });
    expect(readdirSync(sub)).toEqual(['a.json']);
    expect(readFileSync(join(sub, 'a.json', 'inside'), 'utf8')).toBe('keep');
  });
});

it('temporary names differ every time (not <path>.<pid>.tmp, which anyone could plant a link at)', () => {
  const a = unguessableTmp('/x/p.svg');
  expect(a).toMatch(new RegExp(`^/x/p\\.svg\\.${process.pid}\\.[0-9a-f]{12}\\.tmp$`));
  expect(unguessableTmp('/x/p.svg')).not.toBe(a);
});
