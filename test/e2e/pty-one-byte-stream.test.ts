import { afterAll, describe, expect, it } from 'vitest';
import { openTerminal, type Terminal } from '../helpers/pty.js';

// The terminal of the e2e tests is read as one UTF-8 byte stream (issue 29): bench-stored's
// 80-column golden test failed in a fresh clone with '████��████' when a bar character's three
// bytes came in two reads of the terminal. Pinned here by splitting one on purpose.

const terms: Terminal[] = [];
afterAll(() => terms.forEach((t) => t.child.kill('SIGKILL')));

describe('openTerminal', () => {
  it('a multi-byte character split between two writes (and so two reads) is one character', async () => {
    const script = "process.stdout.write(Buffer.from([0xe2, 0x96])); setTimeout(() => process.stdout.write(Buffer.from([0x88, 0x0a])), 300)";
    const term = openTerminal([process.execPath, '-e', script], { PATH: process.env.PATH }, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(0);
    expect(term.raw()).toContain('█');
    expect(term.raw()).not.toContain('\uFFFD');
  });
});
