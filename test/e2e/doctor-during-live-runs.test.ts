import { afterEach, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../helpers/cli.js';
import { openTerminal, stripTerm } from '../helpers/pty.js';
import { visibleLength } from '../../src/ui/fit.js';
import { cacheQwen3 } from '../helpers/runs.js';
import { survivors, upHarness } from '../helpers/up-run.js';
import { homeProcesses } from '../helpers/home-processes.js';
import { formatPorts, portsByKind } from '../../src/plan/port-choice.js';

// doctor while runs are live side by side (a detached run and a second one named with up --name):
// a live run's processes are its own, counted as status counts them, with its supervisor named;
// its ports are said held by it (which process) or free; `doctor --recipe R --set ...` judges the
// ports `up R --name NAME` really takes now, the same choice up then makes.
// It owns its world: other sessions' engine processes on this machine (another checkout's fakes, a
// real VLLM::EngineCore) may rightly be leftovers to doctor; what it proves is that none of this
// test's runs' processes is one, whatever else runs.

const up = upHarness('dd-doclive-');
afterEach(() => up.cleanup());

interface Check { id: string; status: string; summary: string; details: string[]; evidence: Record<string, any> }
const checkOf = (out: string, id: string): Check => (JSON.parse(out).checks as Check[]).find((c) => c.id === id)!;

describe('doctor during live runs', () => {
  it('names each live run\'s processes and ports as its own, and checks a recipe on the ports up --name would take', { timeout: 120_000 }, async () => {
    const s = await up.setup();
    cacheQwen3(s.hfCache);
    const a = await runCli(['up', 'agg', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(a.code, a.stderr).toBe(0);
    const b = await runCli(['up', 'agg-router', '--name', 'b', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(b.code, b.stderr).toBe(0);
    const runs = JSON.parse((await runCli(['status', '--json'], s.env)).stdout).runs as { id: string; name: string | null; supervisor: { pid: number }; processes: { name: string; pid: number; alive: boolean; ports: Record<string, number> }[] }[];
    const ra = runs.find((r) => r.name === null)!;
    const rb = runs.find((r) => r.name === 'b')!;
    const { http, system, kvEvents } = s.ports;

    // Without --recipe: the newest live run (b) is judged. On main, run a's frontend, worker and
    // engine core were "3 leftover processes outside any live run" (fail, fix: teardown --orphans).
    const d = await runCli(['doctor', '--json', '--only', 'procs.leftover,ports.free'], s.env);
    const leftover = checkOf(d.stdout, 'procs.leftover');
    // Every process of this test's runs: recorded ones and those under them (engine cores).
    const ours = new Set([...runs.flatMap((r) => r.processes.map((p) => p.pid)), ...homeProcesses(s.stateDir).map((p) => p.pid)]);
    // Other sessions' processes on this machine may be reported; none of ours is, and only they are counted.
    const left = leftover.evidence.processes as { pid: number }[];
    expect(left.filter((p) => ours.has(p.pid))).toEqual([]);
    if (left.length === 0) expect(leftover.summary).not.toMatch(/leftover process(es)? outside any live run/);
    else expect(leftover.summary).toMatch(new RegExp(`^${left.length} leftover process(es)? outside any live run`));
    // Each live run counted as status lists it: the same processes and pids, and its supervisor.
    const shares = leftover.evidence.liveRuns as { runId: string; processes: { name: string; pid: number }[]; under: { process: string; cmd: string }[]; supervisor: { pid: number; detached: boolean } }[];
    expect(shares.map((x) => x.runId).sort()).toEqual([ra.id, rb.id].sort());
    for (const r of [ra, rb]) {
      const share = shares.find((x) => x.runId === r.id)!;
      expect(share.processes).toEqual(r.processes.filter((p) => p.alive).map((p) => ({ name: p.name, pid: p.pid })));
      expect(share.supervisor).toEqual({ pid: r.supervisor.pid, detached: true });
      // The fake worker's engine core runs under it, as vLLM's does.
      expect(share.under.map((u) => u.process).sort()).toEqual(r.processes.filter((p) => p.name.startsWith('agg-')).map((p) => p.name).sort());
    }
    const text = await runCli(['doctor', '--only', 'procs.leftover,ports.free'], s.env);
    const portsB = checkOf(d.stdout, 'ports.free');
    expect(portsB.status).toBe('pass');
    const fb = rb.processes.find((p) => p.name === 'frontend')!;
    // b's http port is held by b's frontend; the fake workers bind no KV-event port: said free.
    expect(portsB.summary).toMatch(new RegExp(`^3 held by run ${rb.id} \\(b\\) itself \\(${fb.ports.http} frontend\\.http pid ${fb.pid}, .*\\); 2 free: ${kvEvents} agg-0\\.kvEvents, ${kvEvents + 1} agg-1\\.kvEvents$`));

    // Piped text: whole lines; the header says which run is judged and that another is live; the
    // port line names run and process, the process line counts as status does.
    expect(text.stdout.split('\n')[0]).toBe(`dynamo-dev doctor  recipe agg-router (run ${rb.id}); 1 more run is live (${ra.id}): --run ID|NAME judges it`);
    expect(text.stdout).toContain(`3 held by run ${rb.id} (b) itself (${fb.ports.http} frontend.http pid ${fb.pid}`);
    expect(text.stdout).toContain(`live run ${ra.id}: 2 processes, as status lists them (frontend pid ${ra.processes[0].pid}, agg-0 pid ${ra.processes[1].pid}), and under them agg-0's pid `);
    expect(text.stdout).toContain(`supervised by pid ${ra.supervisor.pid} (the detached up)`);

    // --run a: a's own ports, held by a's processes.
    const da = checkOf((await runCli(['doctor', '--json', '--run', ra.id, '--only', 'ports.free'], s.env)).stdout, 'ports.free');
    expect(da.summary).toBe(`all 2 held by run ${ra.id} itself: ${http} frontend.http pid ${ra.processes[0].pid}, ${system} agg-0.system pid ${ra.processes[1].pid}`);

    // --recipe with --set (a's and b's ports): not the nominal ones, which live runs hold, but those
    // up --name takes beside them. On main: 'pass, 3 of 5 ports free, 2 held by the live run'.
    const dr = await runCli(['doctor', '--json', '--recipe', 'agg-router', ...s.sets, '--only', 'ports.free,procs.leftover'], s.env);
    const pr = checkOf(dr.stdout, 'ports.free');
    expect(pr.status).toBe('pass');
    const m = /would take (http \d+, system \d+-\d+, kvEvents \d+-\d+), all free; the recipe's own ports are taken: (.*) \(without --name, up refuses while a run is live\)$/.exec(pr.summary);
    expect(m, pr.summary).not.toBeNull();
    expect(m![2]).toContain(`${http} frontend pid ${ra.processes[0].pid}, ${system} agg-0 pid ${ra.processes[1].pid} held by run ${ra.id}`);
    expect(m![2]).toContain(`held by run b`);
    expect(pr.summary.startsWith('`dynamo-dev up agg-router --name NAME` (with the same --set) would take ')).toBe(true);
    expect(pr.evidence.beside.moved.length).toBeGreaterThan(0);

    // In an 80x24 terminal: every line fits, the command stays whole on one line, nothing is lost.
    const term = openTerminal([process.execPath, BIN, 'doctor', '--recipe', 'agg-router', ...s.sets, '--only', 'ports.free'], { ...s.env, NO_COLOR: undefined }, { cols: 80, rows: 24 });
    expect(await term.exit).toBe(0);
    const lines = stripTerm(term.raw()).replace(/\r/g, '').split('\n');
    for (const l of lines) expect(visibleLength(l), JSON.stringify(l)).toBeLessThanOrEqual(80);
    expect(lines.some((l) => l.includes('`dynamo-dev up agg-router --name NAME`'))).toBe(true);
    expect(lines.map((l) => l.trim()).join(' ')).toContain(`would take ${m![1]}, all free`);

    // The same choice as up's: a third run started now takes exactly those ports (and its preflight
    // passes with two runs live: on main procs.leftover failed it, calling run a's processes leftovers).
    const c = await runCli(['up', 'agg-router', '--name', 'c', '--detach', '--json', ...s.sets], s.env, { timeoutMs: 60_000 });
    const events = c.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(formatPorts(portsByKind(events.find((e) => e.event === 'plan').plan))).toBe(m![1]);
    const pre = events.find((e) => e.event === 'preflight') as { ok: boolean; checks: { id: string; status: string; details: string[] }[] };
    // None of the live runs' processes is a leftover to c's preflight; with nothing else on the
    // machine it passes and c is ready. Another session's leftover engines fail it rightly.
    const failing = pre.checks.filter((x) => x.status === 'fail');
    expect(failing.filter((x) => x.id !== 'procs.leftover'), JSON.stringify(failing)).toEqual([]);
    // Its detail lines: one per leftover ('pid N  user ...'); another state dir's run's are 'not a leftover'.
    const named = failing.flatMap((x) => x.details).filter((l) => /^pid \d+ /.test(l) && !l.includes('not a leftover')).map((l) => Number(/^pid (\d+)/.exec(l)![1]));
    expect(named.filter((pid) => ours.has(pid))).toEqual([]);
    if (failing.length === 0) expect(c.code, c.stdout + c.stderr).toBe(0);

    // --set without --recipe: one line, exit 2.
    const bad = await runCli(['doctor', '--set', 'frontend.httpPort=9000'], s.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^dynamo-dev: --set changes the recipe --recipe names: add --recipe NAME\|FILE/);

    for (const r of [...(failing.length === 0 ? ['c'] : []), 'b', ra.id]) expect((await runCli(['teardown', '--run', r, '--grace', '2'], s.env, { timeoutMs: 30_000 })).code).toBe(0);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});
