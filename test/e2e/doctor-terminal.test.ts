import { afterEach, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fakeEnv, hostLine, SAMPLES, tempHome, type FakeHost } from '../helpers/cli.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';
import { visibleLength } from '../../src/ui/fit.js';

// doctor as a person sees it in a real pseudo-terminal (script(1)) of 80 and 120 columns: prose
// wraps under its gutter, and a fix's command too long for a line stands whole on a line of its
// own (the terminal soft-wraps it), so copying it gives a command that still works.

const homes: ReturnType<typeof tempHome>[] = [];
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
  for (const h of homes.splice(0)) h.cleanup();
});

const LOGS = join(SAMPLES, 'logs');

// The machine line of a host with long names (120 characters), faked: what this machine is called
// never decides whether the test passes.
const HOST: FakeHost = {
  os: 'Debian GNU/Linux 12 (bookworm)', cpu: 'Intel® Xeon® Platinum 8480+ Sapphire Rapids', cores: 224, memGiB: 503.5, node: 'v20.20.2',
};

describe.each([[80, 24], [120, 40]])('doctor in a %ix%i terminal', (cols, rows) => {
  it('the kv.events fix: prose under its gutter, the --kv-events-config flag whole on its own line and paste-able', async () => {
    const h = tempHome('dd-doc-term-');
    homes.push(h);
    const env = fakeEnv(h, { gpu: 'laptop-570', host: HOST, vars: { NO_COLOR: undefined } });
    // The logs copied under the test's own short temporary folder: their paths are printed, and a path
    // under the checkout made the line's width depend on where the repository lies (issue 29, FLAKES.md:
    // 85 columns in /work/wt/arch-host-suite, 80 in /work/wt/arch-host).
    const logs = ['frontend-kv-events-disabled.log', 'worker-agg-ready.log'].map((n) => {
      copyFileSync(join(LOGS, n), join(h.dir, n));
      return join(h.dir, n);
    });
    const term = openTerminal([process.execPath, BIN, 'doctor', '--only', 'kv.events', '--recipe', 'agg-router',
      '--logs', ...logs], env, { cols, rows });
    terms.push(term);
    expect(await term.exit).toBe(1);
    const text = stripTerm(term.raw()).replace(/\r/g, '');
    const lines = text.split('\n');
    const fix = lines.findIndex((l) => l.startsWith('    fix: '));
    expect(fix).toBeGreaterThan(0);
    // The flag and its JSON: one line, at column 0, nothing else on it, no backticks.
    const flag = lines.find((l) => l.startsWith('--kv-events-config '))!;
    expect(flag).toBeDefined();
    expect(lines.indexOf(flag)).toBeGreaterThan(fix);
    const words = await execa('bash', ['-c', `printf '%s\\n' ${flag}`]);
    const [name, json] = words.stdout.split('\n');
    expect(name).toBe('--kv-events-config');
    expect(JSON.parse(json)).toMatchObject({ enable_kv_cache_events: true, publisher: 'zmq' });
    // Every other line fits the terminal; the fix's other lines keep its hanging indent.
    for (const l of lines) if (l !== flag) expect(visibleLength(l), JSON.stringify(l)).toBeLessThanOrEqual(cols);
    const end = lines.findIndex((l, i) => i > fix && l.trim() === '');
    const rest = lines.slice(fix + 1, end).filter((l) => l !== flag);
    expect(rest.length).toBeGreaterThan(0);
    for (const l of rest) expect(l).toMatch(/^ {9}\S/);
    // Nothing of the fix was lost or reordered by the wrapping.
    expect([lines[fix], ...lines.slice(fix + 1, end)].map((l) => l.trim()).join(' ')).toContain('--no-router-kv-events');
  });
});

describe('doctor\'s machine line in a terminal', () => {
  it('a 120-character machine description wraps at 80 columns between its parts, nothing lost; piped it is one line', async () => {
    expect(hostLine(HOST)).toHaveLength(120);
    const h = tempHome('dd-doc-host-');
    homes.push(h);
    const env = fakeEnv(h, { host: HOST, vars: { NO_COLOR: undefined } });
    const term = openTerminal([process.execPath, BIN, 'doctor', '--only', 'kv.events', '--recipe', 'agg'], env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(0);
    const lines = stripTerm(term.raw()).replace(/\r/g, '').split('\n');
    for (const l of lines) expect(visibleLength(l), JSON.stringify(l)).toBeLessThanOrEqual(80);
    const at = lines.findIndex((l) => l.startsWith(HOST.os));
    expect(lines.slice(at, at + 2)).toEqual([
      'Debian GNU/Linux 12 (bookworm)',
      '  Intel® Xeon® Platinum 8480+ Sapphire Rapids (224 cores) · 503.5 GiB RAM',
    ]);
    expect(lines[at + 2]).toBe('  Node v20.20.2');
    const piped = await execa(process.execPath, [BIN, 'doctor', '--only', 'kv.events', '--recipe', 'agg'], { env, extendEnv: false, reject: false });
    expect(piped.stdout.split('\n')).toContain(hostLine(HOST));
  });
});
