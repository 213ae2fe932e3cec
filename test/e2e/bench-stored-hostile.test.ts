import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';

// bench show / compare / list / --plot on stored results someone else wrote (issue 29): escape
// sequences in the document never reach the terminal (they set the window title, cleared the
// screen, planted hyperlinks); control characters never make the SVG invalid; a metric of 5e-324
// does not send the plot's axis into an endless loop (1.9 GB, V8 fatal error, exit 133); --plot
// never replaces a link or a folder at its target and leaves no temporary file when it fails.

const newHome = tempHomes('dd-bench-hostile-');
const STORED = join(FIXTURES, 'bench', 'state');
const ROUTING = '20261205-101500-000-routing';
const AGG = '20261205-110200-000-agg-vs-disagg';
const ESC = '\u001b]0;pwned\u0007\u001b[2J\u001b]8;;http://evil.example\u001b\\here\u001b]8;;\u001b\\\u0000\u0008';

function home(edit: (doc: any) => void) {
  const h = newHome();
  cpSync(STORED, h.stateDir, { recursive: true });
  const path = join(h.stateDir, 'bench', ROUTING, 'result.json');
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  edit(doc);
  writeFileSync(path, JSON.stringify(doc));
  return { h, env: fakeEnv(h, { vars: { LANG: 'C.UTF-8' } }) };
}

describe('stored results with escape sequences and control characters', () => {
  const hostile = () => home((d) => {
    d.preset = `routing${ESC}`;
    d.machine.python = `3.12${ESC}`;
    d.variants[0].name = `kv${ESC}`;
    d.variants[0].model = `Qwen${ESC}`;
  });

  it('show, compare and list print none of them (piped: no escape byte at all); --json keeps the document as stored, escaped', async () => {
    const { env } = hostile();
    for (const args of [['bench', 'show', ROUTING], ['bench', 'compare', ROUTING, AGG], ['bench', 'list']]) {
      const r = await runCli(args, env);
      expect([args, r.code]).toEqual([args, 0]);
      expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
      expect(r.stdout).toContain('routinghere');
    }
    const j = await runCli(['bench', 'show', ROUTING, '--json'], env);
    expect(JSON.parse(j.stdout).preset).toBe(`routing${ESC}`);
  });

  it('--plot FILE.svg is valid XML (no control character), and a PNG renders', async () => {
    const { h, env } = hostile();
    const svg = join(h.dir, 'p.svg');
    const r = await runCli(['bench', 'show', ROUTING, '--plot', svg], env);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(svg, 'utf8')).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    const png = await runCli(['bench', 'show', ROUTING, '--plot', join(h.dir, 'p.png')], env, { timeoutMs: 30_000 });
    expect(png.code, png.stderr).toBe(0);
  });
});

describe('--plot with numbers and targets nobody expected', () => {
  it('every TTFT of 5e-324 (the smallest double): the plot is drawn, exit 0', async () => {
    const { h, env } = home((d) => {
      for (const v of d.variants) for (const run of v.runs ?? []) if (run.metrics) run.metrics.ttftP50Ms = 5e-324;
    });
    const r = await runCli(['bench', 'show', ROUTING, '--plot', join(h.dir, 'tiny.svg')], env, { timeoutMs: 20_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(h.dir, 'tiny.svg'), 'utf8')).toMatch(/^<svg/);
  });

  it('a symbolic link or a folder at the target: refused in one line, exit 2; the link\'s file untouched, no temporary file left', async () => {
    const { h, env } = home(() => {});
    const dir = join(h.dir, 'plots');
    mkdirSync(dir);
    writeFileSync(join(h.dir, 'secret'), 'keep');
    symlinkSync(join(h.dir, 'secret'), join(dir, 'link.svg'));
    mkdirSync(join(dir, 'folder.svg'));
    const link = await runCli(['bench', 'show', ROUTING, '--plot', join(dir, 'link.svg')], env);
    expect([link.code, link.stderr]).toEqual([2, `dynamo-dev: --plot ${join(dir, 'link.svg')}: is a symbolic link; give the path of a new or regular file`]);
    const folder = await runCli(['bench', 'show', ROUTING, '--plot', join(dir, 'folder.svg')], env);
    expect([folder.code, folder.stderr]).toEqual([2, `dynamo-dev: --plot ${join(dir, 'folder.svg')}: is a folder; give the path of a new or regular file`]);
    expect(readFileSync(join(h.dir, 'secret'), 'utf8')).toBe('keep');
    expect(readdirSync(dir).sort()).toEqual(['folder.svg', 'link.svg']);
  });
});

describe('--plot of more variants than a picture holds (issue 29: 3,000 variants took 65 s and 1.2 GB as a PNG)', () => {
  const many = (n: number) => home((d) => {
    d.variants = Array.from({ length: n }, (_, i) => ({ ...d.variants[i % d.variants.length], name: `v${i}` }));
  });

  it('65 variants: refused in one line before anything is drawn or printed, exit 2; 64 are drawn', async () => {
    const { h, env } = many(65);
    for (const args of [['bench', 'show', ROUTING], ['bench', 'compare', ROUTING, AGG]]) {
      const target = join(h.dir, 'many.png');
      const r = await runCli([...args, '--plot', target], env);
      const n = args[1] === 'show' ? 65 : 65 + 2;
      expect([args, r.code, r.stdout, r.stderr]).toEqual([args, 2, '', `dynamo-dev: --plot ${target}: ${n} variants; a plot draws at most 64 (its bars would be thinner than a pixel); the tables show them all without --plot`]);
      expect(readdirSync(h.dir)).not.toContain('many.png');
    }
    const ok = many(64);
    const drawn = await runCli(['bench', 'show', ROUTING, '--plot', join(ok.h.dir, 'ok.svg')], ok.env);
    expect(drawn.code, drawn.stderr).toBe(0);
    expect(readFileSync(join(ok.h.dir, 'ok.svg'), 'utf8')).toContain('>v63');
  });
});
