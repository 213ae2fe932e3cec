import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';
import { parseBenchResult } from '../../src/bench/result.js';

// bench show / compare / list through the built binary, on stored results copied into a temp
// state dir: piped output is the golden render byte for byte (test/unit/bench/render.test.ts
// keeps the goldens); a terminal of 80 columns gets the plot and nothing wider than 80.

const STORED = join(FIXTURES, 'bench', 'state');
const GOLDEN = join(FIXTURES, 'bench', 'golden');
const ROUTING = '20261205-101500-000-routing';
const AGG = '20261205-110200-000-agg-vs-disagg';
const INTERRUPTED = '20261205-120000-000-agg-agg-router-mocker';
const newHome = tempHomes('dd-bench-stored-');

function homeWithResults() {
  const home = newHome();
  cpSync(STORED, home.stateDir, { recursive: true });
  return { home, env: fakeEnv(home, { vars: { LANG: 'C.UTF-8' } }) };
}

const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
});

describe('bench show / compare / list (stored results)', () => {
  it('show piped: the golden render, the same bytes every time; --json the whole document, valid', async () => {
    const { env } = homeWithResults();
    const a = await runCli(['bench', 'show', ROUTING], env);
    expect(a.code).toBe(0);
    expect(`${a.stdout}\n`).toBe(readFileSync(join(GOLDEN, 'routing.piped.txt'), 'utf8'));
    const b = await runCli(['bench', 'show', ROUTING], env);
    expect(b.stdout).toBe(a.stdout);
    const j = await runCli(['bench', 'show', INTERRUPTED, '--json'], env);
    expect(j.code).toBe(0);
    const parsed = parseBenchResult(j.stdout, INTERRUPTED);
    expect(parsed.ok && parsed.result).toEqual(JSON.parse(readFileSync(join(STORED, 'bench', INTERRUPTED, 'result.json'), 'utf8')));
  });

  it('compare piped: both results side by side, the golden render; --json both documents', async () => {
    const { env } = homeWithResults();
    const r = await runCli(['bench', 'compare', ROUTING, AGG], env);
    expect(r.code).toBe(0);
    expect(`${r.stdout}\n`).toBe(readFileSync(join(GOLDEN, 'compare.piped.txt'), 'utf8'));
    const j = await runCli(['bench', 'compare', ROUTING, AGG, '--json'], env);
    expect(JSON.parse(j.stdout).results.map((d: { id: string }) => d.id)).toEqual([ROUTING, AGG]);
  });

  it('list: newest first with what was benched and the variants by status; --json', async () => {
    const { env } = homeWithResults();
    const r = await runCli(['bench', 'list'], env);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').map((l) => l.split(' ')[0])).toEqual(['id', INTERRUPTED, AGG, ROUTING]);
    expect(r.stdout).toMatch(new RegExp(`^${ROUTING} +2026-12-05 10:15 +routing +4 measured, 1 invalid$`, 'm'));
    // On an 80-column terminal every line fits (issue 31: a routing row alone was 91 wide).
    const term = openTerminal([process.execPath, BIN, 'bench', 'list'], env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(0);
    for (const line of stripTerm(term.raw()).replace(/\r/g, '').split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    expect(r.stdout).toContain('1 measured, 1 failed, 1 missing (interrupted)');
    const j = JSON.parse((await runCli(['bench', 'list', '--json'], env)).stdout);
    expect(j.results[2]).toMatchObject({ id: ROUTING, preset: 'routing', variants: { measured: 4, invalid: 1, failed: 0, missing: 0 }, problem: null });
    const empty = await runCli(['bench', 'list'], fakeEnv(newHome()));
    expect(empty).toMatchObject({ code: 0, stdout: 'no bench results yet: dynamo-dev bench --preset routing runs one' });
  });

  it('a bad or unknown id, a bad --plot name, a broken result: one line, exit 2', async () => {
    const { home, env } = homeWithResults();
    const bad = await runCli(['bench', 'show', '../runs'], env);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr.split('\n')[0]).toBe('dynamo-dev: "../runs" is not a bench id (ids look like 20261205-141500-123-routing)');
    const none = await runCli(['bench', 'compare', ROUTING, '20991231-000000-000-x'], env);
    expect(none.code).toBe(2);
    expect(none.stderr.split('\n')[0]).toBe(`dynamo-dev: no bench result "20991231-000000-000-x" in ${join(home.stateDir, 'bench')}`);
    const gif = await runCli(['bench', 'show', ROUTING, '--plot', join(home.dir, 'x.gif')], env);
    expect(gif.code).toBe(2);
    expect(gif.stderr).toBe(`dynamo-dev: --plot ${join(home.dir, 'x.gif')}: the file must end in .svg or .png (the picture's format)`);
    cpSync(join(FIXTURES, 'bench', 'make-fixtures.mjs'), join(home.stateDir, 'bench', AGG, 'result.json'));
    const broken = await runCli(['bench', 'show', AGG], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^dynamo-dev: \S+result\.json: not JSON \(.*\)$/);
    // list still lists the others, and says why this one cannot be read.
    expect((await runCli(['bench', 'list'], env)).stdout).toMatch(new RegExp(`^${AGG} +unreadable: not JSON`, 'm'));
    const missingArg = await runCli(['bench', 'compare', ROUTING], env);
    expect(missingArg.code).toBe(2);
  });

  it('--plot FILE.svg and FILE.png: a picture with every variant, the report still printed', async () => {
    const { home, env } = homeWithResults();
    const svgPath = join(home.dir, 'routing.svg');
    const r = await runCli(['bench', 'show', ROUTING, '--plot', svgPath], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`plot: ${svgPath}`);
    const svg = readFileSync(svgPath, 'utf8');
    for (const v of ['kv-events, 0 failed of 216', 'kv-approx, 0 failed of 216', 'round-robin, 0 failed of 216', 'random, 0 failed of 216', 'kv-events-off (INVALID: no numbers)']) expect(svg).toContain(`>${v}</text>`);
    const pngPath = join(home.dir, 'compare.png');
    const p = await runCli(['bench', 'compare', AGG, INTERRUPTED, '--plot', pngPath], env, { timeoutMs: 60_000 });
    expect(p.code).toBe(0);
    const png = readFileSync(pngPath);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.readUInt32BE(16)).toBe(1920); // width: 960 px at 2x
  });

  it('on an 80-column terminal: the golden 80-column render with the plot, no line wider than 80', async () => {
    const { env } = homeWithResults();
    const term = openTerminal([process.execPath, BIN, 'bench', 'show', ROUTING], env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(0);
    const text = stripTerm(term.raw()).replace(/\r/g, '');
    expect(text).toBe(readFileSync(join(GOLDEN, 'routing.80.txt'), 'utf8'));
    for (const line of text.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    // The headline's plot: the cache-hit share (the means were not kept in this older result).
    expect(text).toContain('  kv-events      █████████████████████████████████████████████████████████ 73.0%');
    // Not a UTF-8 terminal: the same bars in '#'.
    const ascii = openTerminal([process.execPath, BIN, 'bench', 'show', ROUTING], { ...env, LANG: 'C', LC_ALL: 'C' }, { cols: 80, rows: 24 });
    terms.push(ascii);
    expect(await ascii.exit).toBe(0);
    expect(stripTerm(ascii.raw()).replace(/\r/g, '')).toMatch(/^ {2}kv-events {6}#{57} 73\.0%$/m);
  });
});
