import { afterEach, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { cacheQwen3, portBlock, records, survivors } from '../helpers/runs.js';
import { BIN, fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { screenOf } from '../helpers/screen.js';
import { finalText, openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';
import { visibleLength } from '../../src/ui/fit.js';

// `up` as a person sees it: the built binary in a real pseudo-terminal (script(1)) of 80x24 and
// 120x40, Ctrl-C typed as the byte a keyboard sends. What is asserted is what lands on the screen.

const homes: ReturnType<typeof tempHome>[] = [];
const terms: Terminal[] = [];
const servers: Server[] = [];

/** A state dir, the cached model (so the GPU picture has numbers) and free ports in 31,000-32,599. */
async function setup(vars: Record<string, string> = {}) {
  const h = tempHome('dd-term-');
  homes.push(h);
  const base = await portBlock(31_000, 80);
  const sets = ['--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`, '--set', `ports.nixlSideChannel=${base + 15}`];
  cacheQwen3(h.hfCache);
  const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120', NO_COLOR: undefined, ...vars } });
  return { ...h, env, sets, base };
}



afterEach(async () => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
  for (const s of servers.splice(0)) s.close();
  for (const h of homes.splice(0)) {
    if (records(h.stateDir).length > 0) await runCli(['teardown', '--grace', '1'], fakeEnv(h, { python: true }), { timeoutMs: 20_000 });
    h.cleanup();
  }
});

/**
 * The last byte a person sees: escape sequences do not count (ink's exit hook shows the cursor
 * again with ESC[?25h after everything else; that moves nothing).
 */
const lastVisible = (raw: string) => stripTerm(raw).replace(/\r/g, '').slice(-1);

/** Lines the tool itself broke: each fits the width, or is one unbreakable token (a path, a command). */
function assertNoWordCut(text: string, cols: number) {
  for (const line of text.split('\n')) {
    if (visibleLength(line) <= cols) continue;
    // Wider lines are a command or end in a path: kept whole on purpose, the terminal soft-wraps them.
    const t = line.trim();
    expect(t.startsWith('curl ') || /(^|\s)\/\S+$/.test(t), `a line wider than ${cols} that is not a command or path: ${JSON.stringify(line)}`).toBe(true);
  }
}

describe.each([[80, 24], [120, 40]])('up in a %ix%i terminal', (cols, rows) => {
  it('ready summary: the curl line pastes into bash and answers 200, paths are whole, the GPU bar adds up; Ctrl-C ends with a newline', async () => {
    const s = await setup();
    const term = openTerminal([process.execPath, BIN, 'up', 'agg-router', '--no-preflight', '--grace', '2', ...s.sets], s.env, { cols, rows });
    terms.push(term);
    await term.waitFor(/supervising: Ctrl-C stops every process/);
    const text = finalText(term.raw(), '✓ ready in');
    const lines = text.split('\n');
    // The command stands alone on one line (the terminal soft-wraps it; copying gives it whole).
    const curl = lines.find((l) => l.startsWith('curl '))!;
    expect(curl).toBeDefined();
    expect((await execa('bash', ['-n', '-c', curl], { reject: false })).exitCode).toBe(0);
    const answer = await execa('bash', ['-c', `${curl} -o /dev/null -w '%{http_code}'`], { reject: false, timeout: 10_000 });
    expect(answer.stdout).toBe('200');
    const rec = records(s.stateDir)[0];
    for (const p of rec.processes) expect(lines.some((l) => l.trim().endsWith(p.log))).toBe(true);
    assertNoWordCut(text, cols);
    // The GPU picture: each share = weights + KV + other; shares + free = the GPU's 8,188 MiB.
    const shares = [...text.matchAll(/= ([\d,]+) MiB: weights ([\d,]+) \+ KV ~?([\d,]+) \+ other ~?([\d,]+)/g)]
      .map((m) => m.slice(1).map((x) => Number(x.replace(/,/g, ''))));
    expect(shares).toHaveLength(2);
    for (const [share, w, kv, other] of shares) expect(w + kv + other).toBe(share);
    const free = Number(/free\s+([\d,]+) MiB/.exec(text)![1].replace(/,/g, ''));
    expect(shares.reduce((a, [x]) => a + x, 0) + free).toBe(8188);
    expect(shares[0][0]).toBe(Math.round(8188 * 0.38));

    term.type('\x03');
    expect(await term.exit).toBe(0);
    expect(lastVisible(term.raw())).toBe('\n');
    expect(stripTerm(term.raw())).toMatch(/stopped 3 processes in/);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});

describe('up --device cpu in an 80x24 terminal', () => {
  it('the plan\'s line is wrapped at words to the width (the terminal wrapping it threw the live view\'s redraw off: the header vanished, a stale table stayed)', async () => {
    const s = await setup();
    const env = fakeEnv(s, { python: true, vars: { FAKE_ENGINE_MAX_S: '120', NO_COLOR: undefined } });
    const term = openTerminal([process.execPath, BIN, 'up', 'agg-router', '--device', 'cpu', '--no-preflight', '--grace', '2', '--set', 'workers.0.gpuMemoryUtilization=0.15', ...s.sets], env, { cols: 80, rows: 24 });
    terms.push(term);
    await term.waitFor(/supervising: Ctrl-C stops every process/);
    const text = stripTerm(term.raw()).replace(/\r/g, '');
    const at = text.indexOf('3 processes (frontend, agg-0, agg-1) on the CPU');
    expect(at).toBeGreaterThan(0);
    const [first, second] = text.slice(at).split('\n');
    expect(visibleLength(first)).toBeLessThanOrEqual(80);
    expect(`${first} ${second.trim()}`).toMatch(/^3 processes \(frontend, agg-0, agg-1\) on the CPU \(vLLM's CPU build, ~[\d.]+ GiB of RAM\)$/);
    assertNoWordCut(finalText(term.raw(), '✓ ready in'), 80);
    term.type('\x03');
    expect(await term.exit).toBe(0);
  });
});

describe('up in an 80x24 terminal: stops and failures', () => {
  it('Ctrl-C with a worker that ignores SIGTERM shows the countdown; a second Ctrl-C ends it in < 1 s with nothing left', async () => {
    const s = await setup();
    s.env[`FAKE_WORKER_SCENARIO_${s.base + 2}`] = 'ignore-sigterm';
    const term = openTerminal([process.execPath, BIN, 'up', 'agg-router', '--no-preflight', '--grace', '30', ...s.sets], s.env, { cols: 80, rows: 24 });
    terms.push(term);
    await term.waitFor(/supervising: Ctrl-C stops every process/);
    term.type('\x03');
    await term.waitFor(/agg-1\s+SIGTERM sent; SIGKILL in \d+s[\s\S]*press Ctrl-C again to SIGKILL now/);
    await term.waitFor(/✓ frontend\s+stopped \(SIGTERM\)/);
    const t0 = performance.now();
    term.type('\x03');
    expect(await term.exit).toBe(0);
    expect(performance.now() - t0).toBeLessThan(1000);
    const text = finalText(term.raw(), 'stopped 3 processes');
    // Killed by the user before the grace ran out: the report says so, not that it ignored SIGTERM.
    expect(stripTerm(term.raw())).toMatch(/✓ agg-1\s+stopped \(SIGKILL at the second Ctrl-C\)/);
    expect(text).toMatch(/! agg-1 was killed by the second Ctrl-C \(SIGKILL\) after [\d.]+ m?s; its log:\n {2}\S+agg-1\.log\n$/);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });

  it('a worker that fails: the cause and fix are on the screen, the ✗ up failed line last, a newline at the end', async () => {
    const s = await setup();
    s.env[`FAKE_WORKER_SCENARIO_${s.base + 2}`] = 'error804';
    const term = openTerminal([process.execPath, BIN, 'up', 'agg-router', '--no-preflight', '--grace', '2', ...s.sets], s.env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(1);
    const raw = term.raw();
    expect(lastVisible(raw)).toBe('\n');
    const text = finalText(raw, 'stopped ');
    const lines = text.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^✗ up failed: agg-1 exited with code 1 before it was ready$/);
    // Actionable last: the fix (and its wrapped continuation) right above the final line.
    const fix = lines.findIndex((l) => l.startsWith('  fix: '));
    expect(fix).toBeGreaterThan(lines.findIndex((l) => l.startsWith('  cause: ')));
    expect(lines.slice(fix + 1, -1).every((l) => l.startsWith('    '))).toBe(true);
    expect(text).toMatch(/cause: CUDA Error 804[^]*\[cuda\.error804\]/);
    // The report fits the screen: what to do is visible without scrolling.
    expect(lines.reduce((n, l) => n + Math.max(1, Math.ceil(visibleLength(l) / 80)), 0)).toBeLessThan(24);
    assertNoWordCut(text, 80);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });

  it('a preflight failure: the spinner goes, no process table and no run id; the failures and a newline', async () => {
    const s = await setup();
    // Someone else on the frontend's port: ports.free fails.
    const srv = createServer();
    servers.push(srv);
    await new Promise<void>((r) => srv.listen(s.base, '0.0.0.0', () => r()));
    const term = openTerminal([process.execPath, BIN, 'up', 'agg-router', ...s.sets], s.env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(1);
    const raw = term.raw();
    expect(lastVisible(raw)).toBe('\n');
    expect(stripTerm(raw)).toContain('preflight: ');
    // On the screen the spinner line is gone and the plan's summary under the first line stays
    // (one time in four the spinner's last frame was drawn back over it).
    const screen = screenOf(raw, 80);
    expect(screen.filter((l) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /.test(l))).toEqual([]);
    expect(screen[1]).toMatch(/^3 processes \(frontend, agg-0, agg-1\)/);
    const text = stripTerm(raw).replace(/\r/g, '');
    expect(text.split('\n')[0]).toBe('up agg-router · Qwen/Qwen3-0.6B · Dynamo 1.6.1 · python3');
    expect(text).not.toMatch(/agg-0\s+waiting/);
    expect(text).not.toMatch(/^run \d/m);
    expect(text).toMatch(/✗ preflight failed/);
    expect(text.trimEnd().split('\n').at(-1)).toMatch(/^✗ up failed: preflight: .*ports\.free.* failed; nothing was started$/);
    expect(records(s.stateDir)).toEqual([]);
  });
});

describe('up: Ctrl-C during preflight', () => {
  it('the spinner goes, one line says what was interrupted and that nothing was started, exit 130, nothing left', async () => {
    const s = await setup();
    // An interpreter that never answers: the Python environment check is still running when Ctrl-C comes.
    const python = join(s.dir, 'python-that-hangs');
    writeFileSync(python, '#!/bin/sh\nexec sleep 60\n', { mode: 0o755 });
    const term = openTerminal([process.execPath, BIN, 'up', 'agg-router', ...s.sets], { ...s.env, DYNAMO_DEV_PYTHON: python }, { cols: 80, rows: 24 });
    terms.push(term);
    await term.waitFor(/Python environment/);
    term.type('\x03');
    expect(await term.exit).toBe(130);
    const raw = term.raw();
    expect(lastVisible(raw)).toBe('\n');
    const text = stripTerm(raw).replace(/\r/g, '');
    const from = text.lastIndexOf('interrupted (SIGINT) during preflight; still checking: ');
    expect(from).toBeGreaterThan(0);
    // Its last words, wrapped under a hanging indent: nothing after them.
    expect(text.slice(from).replace(/\n +/g, ' ').trimEnd()).toMatch(/^interrupted \(SIGINT\) during preflight; still checking: [^\n]*Python environment[^\n]*\. Nothing was started\.$/);
    // The spinner was erased before the line: no frame of it after the line.
    expect(raw.slice(raw.lastIndexOf('interrupted'))).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    for (const l of text.slice(from).split('\n')) expect(visibleLength(l)).toBeLessThanOrEqual(80);
    expect(records(s.stateDir)).toEqual([]);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});

describe('up: live hints and who stopped it', () => {
  it('a worker waiting for a Hugging Face lock another process holds: a hint naming the holder pid', async () => {
    const s = await setup();
    s.env[`FAKE_WORKER_SCENARIO_${s.base + 1}`] = 'lock-wait';
    const lockDir = join(s.hfCache, '.locks', 'models--Qwen--Qwen3-0.6B');
    mkdirSync(lockDir, { recursive: true });
    const lock = join(lockDir, 'f47f71177f32bcd101b7573ec9171e6a57f4f4c31148d38e382306f42996874b.lock');
    writeFileSync(lock, '');
    // One process that takes the lock and sleeps (as a download holding it would).
    const holder = execa('python3', ['-c', 'import fcntl,sys,time\nf=open(sys.argv[1])\nfcntl.flock(f, fcntl.LOCK_EX)\nprint("locked", flush=True)\ntime.sleep(30)', lock], { reject: false });
    await new Promise<void>((r) => holder.stdout!.once('data', () => r()));
    try {
      const up = execa(process.execPath, [BIN, 'up', 'agg-router', '--no-preflight', '--json', '--ready-timeout', '8', ...s.sets], { env: s.env, extendEnv: false, reject: false, timeout: 30_000 });
      const r = await up;
      const hints = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((e) => e.event === 'hint');
      expect(hints).toHaveLength(1);
      expect(hints[0]).toMatchObject({ process: 'agg-0', code: 'hf.lock-wait' });
      expect(hints[0].text).toContain(`held by pid ${holder.pid}`);
      expect(hints[0].text).toContain('dynamo-dev doctor --only hf.locks');
    } finally {
      holder.kill('SIGKILL');
      await holder;
    }
  });

  it('a foreground run stopped by teardown from another terminal says so', async () => {
    const s = await setup();
    const term = openTerminal([process.execPath, BIN, 'up', 'agg-router', '--no-preflight', '--grace', '2', ...s.sets], s.env, { cols: 100, rows: 30 });
    terms.push(term);
    await term.waitFor(/supervising: Ctrl-C stops every process/);
    const td = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(await term.exit).toBe(0);
    expect(stripTerm(term.raw())).toMatch(/stopped 3 processes by dynamo-dev teardown \(pid \d+\) from another terminal/);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});
