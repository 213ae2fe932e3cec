import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { formatPlanText, processTable } from '../../../src/ui/plan-text.js';
import { buildPlan } from '../../../src/plan/build.js';
import { loadRecipe } from '../../../src/host/files/recipes.js';

// `up --dry-run`'s process table on a terminal stays within its width: the ports and starts cells
// wrap onto more lines of their row (never inside a word, "KV line" kept together); only a
// terminal too narrow even so loses whole columns. Piped (no width) it is one line per process,
// as before.

chalk.level = 0;

const RECIPES = ['agg', 'agg-router', 'agg-router-approx', 'disagg-same-gpu', 'mocker'];
const plan = async (name: string) => buildPlan({ recipe: await loadRecipe(name), runDir: '/tmp/x/runs/r1', gpuTotalMiB: 8188 });
/** The table's lines: from its header to the blank line after it. */
const tableOf = (text: string) => {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('process '));
  return lines.slice(at, lines.indexOf('', at));
};
const words = (lines: string[]) => lines.join(' ').split(/\s+/).filter(Boolean).sort();

describe('up --dry-run: the process table', () => {
  it('piped: one line per process, as wide as it takes (disagg-same-gpu: 110 columns)', async () => {
    expect(tableOf(formatPlanText(await plan('disagg-same-gpu')))).toEqual([
      'process    role      ports                                             gpu   KV tokens  starts                ',
      'frontend   frontend  http=8000                                         -     -          at once',
      'decode-0   decode    system=8081 nixlSideChannel=20097                 0.38  -          at once',
      'prefill-0  prefill   system=8082 nixlSideChannel=20098 kvEvents=20080  0.38  -          after decode-0 KV line',
    ]);
  });

  it('at 80 columns (disagg-same-gpu): ports and starts wrap within their column, every other cell on the row\'s first line', async () => {
    expect(tableOf(formatPlanText(await plan('disagg-same-gpu'), 80))).toEqual([
      'process    role      ports                  gpu   KV tokens  starts        ',
      'frontend   frontend  http=8000              -     -          at once',
      'decode-0   decode    system=8081            0.38  -          at once',
      '                     nixlSideChannel=20097',
      'prefill-0  prefill   system=8082            0.38  -          after decode-0',
      '                     nixlSideChannel=20098                   KV line',
      '                     kvEvents=20080',
    ]);
  });

  it('at 80 columns (agg-router, 84 piped): the wrap that adds the fewest lines (starts, one line; not ports, two)', async () => {
    expect(tableOf(formatPlanText(await plan('agg-router'), 80))).toEqual([
      'process   role      ports                       gpu   KV tokens  starts     ',
      'frontend  frontend  http=8000                   -     -          at once',
      'agg-0     agg       system=8081 kvEvents=20080  0.38  -          at once',
      'agg-1     agg       system=8082 kvEvents=20081  0.38  -          after agg-0',
      '                                                                 KV line',
    ]);
    expect(Math.max(...tableOf(formatPlanText(await plan('agg-router'), 84)).map((l) => l.length))).toBe(84);
    expect(tableOf(formatPlanText(await plan('agg-router'), 83))).toHaveLength(5);
  });

  it.each(RECIPES.flatMap((r) => [80, 120].map((w) => [r, w] as const)))('%s at %i columns: no line wider, no word lost or cut, one row per process', async (name, w) => {
    const p = await plan(name);
    const piped = tableOf(formatPlanText(p));
    const lines = tableOf(formatPlanText(p, w));
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(w);
    expect(words(lines)).toEqual(words(piped));
    expect(lines.filter((l) => /^\S/.test(l)).map((l) => l.split(/\s+/)[0])).toEqual(['process', ...p.processes.map((x) => x.name)]);
    // Wide enough for the piped table: exactly it.
    if (Math.max(...piped.map((l) => l.length)) <= w) expect(lines).toEqual(piped);
  });

  it('"KV line" is never split; at 60 columns whole columns go, KV tokens first, then role', async () => {
    const p = await plan('disagg-same-gpu');
    const at60 = tableOf(formatPlanText(p, 60));
    expect(at60[0]).toBe('process    role      ports                  gpu   starts  ');
    for (const l of at60) expect(l.length, l).toBeLessThanOrEqual(60);
    expect(at60.join('\n')).toMatch(/\bKV line$/m);
    expect(tableOf(formatPlanText(p, 50))[0].trimEnd()).toBe('process    ports                  gpu   starts');
  });
});

describe('processTable: the room it takes', () => {
  const head = ['name', 'ports', 'starts'];
  const rows = [['a', 'x=1 y=2', 'at once'], ['b', 'x=3', 'after a']];
  const natural = ['name  ports    starts ', 'a     x=1 y=2  at once', 'b     x=3      after a'];

  it('exactly as wide as the terminal: unchanged; one column less: the widest wrapping cell wraps', () => {
    expect(processTable(head, rows, 22)).toEqual(natural);
    expect(processTable(head, rows)).toEqual(natural);
    expect(processTable(head, rows, 21)).toEqual(['name  ports  starts ', 'a     x=1    at once', '      y=2', 'b     x=3    after a']);
  });

  it('a word is never cut: narrower than its longest word, a column that cannot drop stays as narrow as it can', () => {
    expect(processTable(head, rows, 10)).toEqual(['name  ports  starts', 'a     x=1    at', '      y=2    once', 'b     x=3    after', '             a']);
  });
});
