import { afterEach, describe, expect, it } from 'vitest';
import { BIN, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';
import { visibleLength } from '../../src/ui/fit.js';

// `recipes` in an 80-column terminal: descriptions wrap at word boundaries under their column
// (the terminal had cut 'publishi|ng'); piped, one whole line per recipe.

const home = tempHomes('dd-recipes-term-');
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
});

describe('recipes on a terminal', () => {
  it('at 80 columns every line fits, no word is cut, and the words are those printed to a pipe', async () => {
    const env = fakeEnv(home());
    const term = openTerminal([process.execPath, BIN, 'recipes'], env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(0);
    const lines = stripTerm(term.raw()).replace(/\r/g, '').split('\n').filter((l) => l !== '');
    for (const l of lines) expect(visibleLength(l), JSON.stringify(l)).toBeLessThanOrEqual(80);
    const piped = (await runCli(['recipes'], env)).stdout.split('\n').filter((l) => l !== '');
    // A piped line longer than the terminal (agg-router's) arrives as its line and continuations.
    const agg = piped.find((l) => l.startsWith('agg-router '))!;
    expect(visibleLength(agg)).toBeGreaterThan(80);
    const at = lines.findIndex((l) => l.startsWith('agg-router '));
    expect(lines[at + 1]).toMatch(/^ {19}\S/);
    expect(`${lines[at]} ${lines[at + 1].trimStart()}`).toBe(agg);
    expect(lines.join(' ').split(/\s+/)).toEqual(piped.join(' ').split(/\s+/));
    expect(lines.join('\n')).toContain('publishing');
  });
});
