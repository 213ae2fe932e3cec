import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';
import { portBlock, records } from '../helpers/runs.js';
import { homeProcesses } from '../helpers/home-processes.js';
import { parseBenchResult, type BenchResult } from '../../src/bench/result.js';

// A whole `bench` through the built binary without the real Dynamo: the fake frontend and mocker
// workers (test/fixtures/python: routing, cached_tokens, the KV-event counter on /metrics) and the
// fake AIPerf on PATH (test/fixtures/aiperf/bin/aiperf: real requests to the frontend, then AIPerf
// 0.13.0's real export with the frontend's cache totals). Preflight is skipped: on a shared
// machine other sessions' fakes rightly fail procs.leftover; it is up's own, tested there.

const newHome = tempHomes('dd-bench-run-');
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
});

async function setup(vars: Record<string, string> = {}) {
  const home = newHome();
  const base = await portBlock(21_000, 500);
  const env = fakeEnv(home, { python: true, vars: { LANG: 'C.UTF-8', ...vars } });
  env.PATH = [join(FIXTURES, 'aiperf', 'bin'), env.PATH].join(delimiter);
  const args = ['--no-preflight', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`];
  return { home, env, args };
}

const stored = (stateDir: string, id: string): BenchResult => {
  const r = parseBenchResult(readFileSync(join(stateDir, 'bench', id, 'result.json'), 'utf8'), id);
  if (!r.ok) throw new Error(r.reason);
  return r.result;
};
const idOf = (stderr: string) => /again: `dynamo-dev bench show (\S+)`\)/.exec(stderr)![1];
/** One table of the report, from its title to the blank line. */
const table = (report: string, title: string) => report.split('\n\n').find((b) => b.startsWith(title))!;

/** Nothing of the home runs: every run stopped, no process carries its state dir. */
function nothingLeft(stateDir: string) {
  expect(records(stateDir).map((r) => r.state).every((s) => s === 'stopped')).toBe(true);
  expect(homeProcesses(stateDir).map((p) => p.cmd)).toEqual([]);
}

describe('bench RECIPE --vary: a whole bench on the fakes', () => {
  it('two variants measured: progress, then the report `bench show ID` prints byte for byte; the plot; nothing left running', async () => {
    const { home, env, args } = await setup();
    const svg = join(home.dir, 'routing.svg');
    const r = await runCli(['bench', 'mocker', '--vary', 'frontend.routerMode=kv,round-robin', '--concurrency', '1,4', '--repeats', '2', '--plot', svg, ...args], env, { timeoutMs: 90_000 });
    expect(r.code, r.stderr).toBe(0);
    const id = idOf(r.stderr);
    expect(r.stdout.split('\n')[0]).toBe(`bench ${id}: 2 variants, concurrency 1,4, 2 repeats of 32 requests; AIPerf (version unknown)`);
    expect(r.stdout).toContain('\n[1/2] routerMode=kv\n');
    expect(r.stdout).toContain('\n  routerMode=kv: gates at ready: 4 pass, processes.alive after the load\n');
    expect(r.stdout).toContain('\n  routerMode=round-robin: MEASURED\n');

    // The report after the progress is the stored result's: `bench show` gives the same bytes.
    const shown = await runCli(['bench', 'show', id], env);
    expect(shown.code).toBe(0);
    expect(r.stdout.endsWith(`\n\n${shown.stdout}`)).toBe(true);
    expect(shown.stdout.split('\n')[0]).toBe(`bench ${id} · recipes mocker`);
    // A mocker recipe's run is recorded as the mocker's, with no vLLM to know the version of.
    expect(shown.stdout).toMatch(/^machine: no GPU · .* · vLLM not used \(mocker engine\) · /m);
    expect(shown.stdout).toContain(`\ncommand: dynamo-dev bench mocker --vary frontend.routerMode=kv,round-robin --concurrency 1,4 --repeats 2 --plot ${svg} ${args.join(' ')}\n`);
    const ttft = table(shown.stdout, 'TTFT p50');
    expect(ttft).toMatch(/^variant +concurrency 1 +concurrency 4$/m);
    expect(ttft).toMatch(/^routerMode=kv +57\.1 +\(57\.1-57\.1\) +1\.00x +57\.1 +\(57\.1-57\.1\) +1\.00x$/m);
    expect(ttft).toMatch(/^routerMode=round-robin +57\.1 .* 1\.00x$/m);
    // The fake AIPerf's requests went through the fake router: KV routing keeps the shared prefix on one worker.
    const d = stored(home.stateDir, id);
    expect(d.machine).toMatchObject({ engine: 'mocker', vllm: null });
    const hits = (name: string) => d.variants.find((v) => v.name === name)!.runs.find((x) => x.concurrency === 1)!.metrics.cacheHitShare!;
    expect(hits('routerMode=kv')).toBeGreaterThan(hits('routerMode=round-robin'));
    expect(d.variants.map((v) => [v.name, v.status, v.runs.length])).toEqual([['routerMode=kv', 'measured', 4], ['routerMode=round-robin', 'measured', 4]]);
    // The KV router's events were seen (the frontend's counter), not only no warning.
    expect(d.variants[0].gates.find((g) => g.id === 'kv.events')!.summary).toMatch(/; the router applied \d+ KV events? from 1 worker$/);
    // Where each variant's time went (bench/README.md measures bench's own share).
    for (const v of d.variants) expect(v.timings).toMatchObject({ upMs: expect.any(Number), loadMs: expect.any(Number), teardownMs: expect.any(Number), totalMs: expect.any(Number) });

    expect(r.stderr).toBe(`result: ${join(home.stateDir, 'bench', id, 'result.json')} (again: \`dynamo-dev bench show ${id}\`)\nplot: ${svg}`);
    const picture = readFileSync(svg, 'utf8');
    for (const v of ['routerMode=kv', 'routerMode=round-robin']) expect(picture).toContain(`>${v}, 0 failed of `);
    nothingLeft(home.stateDir);
  }, 120_000);

  it('a gate that fails makes its variant INVALID with the reason and no number; the other is measured; exit 1', async () => {
    // Workers that say they publish KV events, none of which reaches the router, and no warning yet.
    const { home, env, args } = await setup({ FAKE_FRONTEND_SCENARIO: 'kv-events-lost' });
    const r = await runCli(['bench', 'mocker', '--vary', 'frontend.routerMode=kv,round-robin', '--repeats', '1', ...args], env, { timeoutMs: 90_000 });
    expect(r.code, r.stderr).toBe(1);
    const reason = "kv.events: no KV event reached the router's index during the run (dynamo_component_kv_cache_events_applied 0): routing ignored the cache, though no warning said so";
    expect(r.stdout).toContain(`\n  routerMode=kv: INVALID: ${reason}\n`);
    // In the report: the reason once under the counts, the status in every table, never a number.
    expect(r.stdout).toContain(`\nvariants: 1 measured, 1 invalid\n  routerMode=kv: INVALID: ${reason}\n\n`);
    for (const title of ['TTFT p50', 'TTFT p90', 'ITL p50', 'output tokens/s', 'request throughput', 'cache-hit share']) {
      const t = table(r.stdout, title);
      expect(t).toMatch(/^routerMode=kv +INVALID$/m);
      expect(t).toMatch(/^routerMode=round-robin +\d[\d.]*%? +1\.00x$/m);
    }
    const d = stored(home.stateDir, idOf(r.stderr));
    expect(d.variants[0]).toMatchObject({ status: 'invalid', reason, runs: [] });
    expect(d.variants[0].gates.find((g) => g.id === 'kv.events')!.evidence.eventsApplied).toMatchObject({ ok: 0 });
    expect(d.variants[1].status).toBe('measured');
    nothingLeft(home.stateDir);
  }, 120_000);

  it('a FIFO where AIPerf\'s export goes: the load run fails naming it, the bench ends (issue 29: the export was read with readFileSync and blocked for good)', async () => {
    const { home, env, args } = await setup({ FAKE_AIPERF: 'export-fifo' });
    const r = await runCli(['bench', 'mocker', '--concurrency', '1', '--repeats', '1', ...args], env, { timeoutMs: 90_000 });
    expect(r.stdout).toMatch(/AIPerf's export \S+profile_export_aiperf\.json could not be read: is a named pipe \(FIFO\), not a regular file/);
    expect(r.code).toBe(1);
    nothingLeft(home.stateDir);
  }, 120_000);

  it('AIPerf runs that hit errors: every table marks them, the errors table counts them per run, AIPerf\'s text is quoted, the plot shows them', async () => {
    const { home, env, args } = await setup({ FAKE_AIPERF_ERRORS: '2' });
    const svg = join(home.dir, 'errors.svg');
    const r = await runCli(['bench', 'mocker', '--vary', 'frontend.routerMode=kv,round-robin', '--concurrency', '1,4', '--repeats', '1', '--plot', svg, ...args], env, { timeoutMs: 90_000 });
    // Failed requests are flagged, not a failed bench: what completed was measured and is shown.
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}routerMode=kv: concurrency 1, repeat 1: TTFT mean [\d.]+ ms, .*, 2 failed requests of 6$/m);
    expect(table(r.stdout, 'TTFT mean (ms')).toMatch(/^routerMode=kv +[\d.]+ +1\.00x +2 err! +[\d.]+ +1\.00x +2 err!$/m);
    const errors = table(r.stdout, 'failed requests');
    expect(errors).toMatch(/^routerMode=kv +2 of 6 \(33\.3%\) ! +2 of 6 \(33\.3%\) !$/m);
    expect(errors).toContain('\n! routerMode=kv: 4 of 12 requests failed (33.3%); its numbers are of the 8 that completed\n    4 x "InvalidInferenceResultError: Invalid inference result: No responses with actual content were received from the server (only usage/metadata, null/empty data, or [DONE] markers)"');
    const picture = readFileSync(svg, 'utf8');
    expect(picture).toContain('>routerMode=kv, 4 failed of 12 !</text>');
    expect(picture).toContain('>2 err</text>');
    nothingLeft(home.stateDir);
  }, 120_000);

  it('the routing preset without a GPU: an estimate first, the headline, the events-off control invalid as expected, exit 0', async () => {
    const { home, env, args } = await setup();
    const r = await runCli(['bench', '--preset', 'routing', '--requests', '4', '--repeats', '1', ...args], env, { timeoutMs: 150_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout.split('\n')[1]).toMatch(/^estimate: about \d+m\d\ds \(10 load runs of 4 requests; from typical mocker times, refined as it runs\)$/);
    // Piped: plain lines, no time left on them.
    expect(r.stdout).not.toContain(' left');
    expect(r.stdout).toContain('\nvariants: 4 measured, 1 control invalid as expected\n  kv-events-off: control: invalid as expected (kv.events: ');
    expect(r.stdout).toMatch(/^kv-events-off +INVALID \(control, as expected\)$/m);
    expect(r.stdout).toContain('\nheadline: cache-hit share, TTFT mean, TTFT mean of cache hits, TTFT mean of cache misses\n');
    expect(r.stdout).toMatch(/^kv-events {2}c1 +\|.+\| {2}\d+ hits? /m);
    const d = stored(home.stateDir, idOf(r.stderr));
    expect(d.isolation).toBe('fresh-prefixes');
    expect(d.variants[4]).toMatchObject({ name: 'kv-events-off', status: 'invalid', control: { gate: 'kv.events' } });
    expect(d.variants[0].runs[0].samples!.ttftMs.length).toBe(4);
    nothingLeft(home.stateDir);
  }, 180_000);

  it('a bad --plot name or folder: one line, exit 2, nothing started', async () => {
    const { home, env, args } = await setup();
    const gif = await runCli(['bench', 'mocker', '--plot', join(home.dir, 'x.gif'), ...args], env);
    expect(gif).toMatchObject({ code: 2, stdout: '', stderr: `dynamo-dev: --plot ${join(home.dir, 'x.gif')}: the file must end in .svg or .png (the picture's format)` });
    const nowhere = join(home.dir, 'no-such-folder', 'x.svg');
    const dir = await runCli(['bench', 'mocker', '--plot', nowhere, ...args], env);
    expect(dir).toMatchObject({ code: 2, stdout: '', stderr: `dynamo-dev: --plot ${nowhere}: its folder ${join(home.dir, 'no-such-folder')} does not exist` });
    expect(existsSync(join(home.stateDir, 'bench'))).toBe(false);
    expect(existsSync(join(home.stateDir, 'runs'))).toBe(false);
  });

  it('Ctrl-C during a variant\'s load on an 80x24 terminal: AIPerf and the run stopped, exit 130, the report fits and names the missing variants, the plot is written', async () => {
    const { home, env, args } = await setup({ FAKE_AIPERF: 'hang' });
    const svg = join(home.dir, 'partial.svg');
    const term = openTerminal([process.execPath, BIN, 'bench', 'mocker', '--vary', 'frontend.routerMode=kv,round-robin,random', '--repeats', '1', '--plot', svg, ...args], env, { cols: 80, rows: 24 });
    terms.push(term);
    await term.waitFor(/routerMode=kv: gates at ready/, 60_000);
    // The fake AIPerf has started once its log says so (it then waits for a signal).
    const logOf = () => {
      const b = join(home.stateDir, 'bench');
      const id = existsSync(b) ? readdirSync(b)[0] : undefined;
      const log = id ? join(b, id, 'exports', '01-routerMode_kv', 'c1-r0', 'aiperf.log') : null;
      return log && existsSync(log) && readFileSync(log, 'utf8').startsWith('fake aiperf') ? log : null;
    };
    for (let i = 0; i < 400 && !logOf(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(logOf()).not.toBeNull();
    term.type('\x03');
    expect(await term.exit).toBe(130);
    const text = stripTerm(term.raw()).replace(/\r/g, '');
    for (const line of text.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    expect(text).toMatch(/^ {2}routerMode=kv: stopped run \S+ in [\d.]+ s$/m);
    expect(text).toMatch(/^missing \(the bench was interrupted before them\): routerMode=kv,\s+routerMode=round-robin, routerMode=random$/m);
    expect(text).toContain('dynamo-dev: bench interrupted: nothing left running; what was measured is kept');
    // On a terminal the report ends with the bar plot; here with nothing measured it says so.
    const id = readdirSync(join(home.stateDir, 'bench'))[0];
    expect(text).toContain(`dynamo-dev bench show ${id}`);
    const d = stored(home.stateDir, id);
    expect(d.interrupted).toBe(true);
    expect(d.variants.map((v) => [v.name, v.status])).toEqual([['routerMode=kv', 'missing'], ['routerMode=round-robin', 'missing'], ['routerMode=random', 'missing']]);
    expect(d.variants[0].reason).toBe('interrupted during the load, before any AIPerf run ended');
    expect(readFileSync(svg, 'utf8')).toContain('>routerMode=kv (MISSING: no numbers)</text>');
    nothingLeft(home.stateDir);
  }, 120_000);
});

describe('two benches at once in one state directory', () => {
  it('the second is refused before it starts anything, naming the first; the first measures', { timeout: 120_000 }, async () => {
    const { home, env, args } = await setup();
    const bench = () => runCli(['bench', 'mocker', '--requests', '4', '--concurrency', '1', '--repeats', '1', ...args], env, { timeoutMs: 100_000 });
    const [a, b] = await Promise.all([bench(), bench()]);
    const [won, lost] = a.code === 0 ? [a, b] : [b, a];
    expect(won.code, won.stdout + won.stderr).toBe(0);
    expect(lost.code, lost.stdout + lost.stderr).toBe(2);
    expect(lost.stderr).toMatch(/^dynamo-dev: another bench is running in \S+: bench \S+ \(pid \d+\); one bench per state directory/m);
    // Only the first bench's runs were started, one variant each.
    expect(records(home.stateDir)).toHaveLength(1);
    nothingLeft(home.stateDir);
  });
});
