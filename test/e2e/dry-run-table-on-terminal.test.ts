import { afterEach, describe, expect, it } from 'vitest';
import { BIN, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';

// `up disagg-same-gpu --dry-run` through the built binary: its process table is 110 columns wide
// piped. On an 80-column terminal (script(1)) every line of it fits, its ports and starts cells
// wrapped within their columns; on a 120-column one it is the piped table; piped it is unchanged.

const home = tempHomes('dd-dry-tty-');
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
});

const tableOf = (text: string) => {
  const lines = text.replace(/\r/g, '').split('\n');
  const at = lines.findIndex((l) => l.startsWith('process '));
  return lines.slice(at, lines.indexOf('', at));
};
const words = (lines: string[]) => lines.join(' ').split(/\s+/).filter(Boolean).sort();

describe('up --dry-run on a terminal', () => {
  it('the process table fits 80 columns, is the piped one at 120, and piped is one line per process', async () => {
    const env = fakeEnv(home(), { gpu: 'laptop-570' });
    const piped = await runCli(['up', 'disagg-same-gpu', '--dry-run'], env);
    expect(piped.code, piped.stderr).toBe(0);
    const flat = tableOf(piped.stdout);
    expect(flat.map((l) => l.split(/\s{2,}/)[0])).toEqual(['process', 'frontend', 'decode-0', 'prefill-0']);
    expect(flat.at(-1)).toMatch(/^prefill-0 +prefill +system=\d+ nixlSideChannel=\d+ kvEvents=\d+ +\S+ +\S+ +after decode-0 KV line$/);
    expect(Math.max(...flat.map((l) => l.length))).toBeGreaterThan(100);

    const shown: Record<number, string[]> = {};
    for (const cols of [80, 120]) {
      const term = openTerminal([process.execPath, BIN, 'up', 'disagg-same-gpu', '--dry-run'], env, { cols, rows: 24 });
      terms.push(term);
      expect(await term.exit).toBe(0);
      shown[cols] = tableOf(stripTerm(term.raw()));
    }
    for (const l of shown[80]) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(words(shown[80])).toEqual(words(flat));
    expect(shown[80].length).toBeGreaterThan(flat.length);
    expect(shown[80].join('\n')).toMatch(/ after decode-0\n +nixlSideChannel=\d+ +KV line\n/);
    expect(shown[120]).toEqual(flat);
  });
});
