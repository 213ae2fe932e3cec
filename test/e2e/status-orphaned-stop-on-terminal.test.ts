import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { deadPid, isAlive, killStarted, runEnv, spawnTree, writeFakeRun } from '../helpers/proc-trees.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';
import { visibleLength } from '../../src/ui/fit.js';

// `status` on an 80x24 terminal (script(1)) with a long state dir, of a run whose supervisor died
// while stopping it (record `stopping`, the supervisor dead, its workers still running): the rows
// say READY no, STATE orphaned; the lines wrap to 80 columns, and the logs path, wider than the
// terminal, goes whole on a line of its own at column 0 instead of being cut mid-word. Piped, the
// same lines are one line each.

const home = tempHomes('dd-st-orph-');
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
  killStarted();
});

const ID = '20261202-040000-000-agg-router';
const words = (s: string) => s.split(/\s+/).filter(Boolean);

describe('status of a run whose stop was cut short, on an 80-column terminal', () => {
  it('rows READY no / orphaned, every line within 80 columns, the logs path whole at column 0; piped, one line each', async () => {
    const h = home();
    const stateDir = join(h.dir, 'a-rather-long-folder-name', 'for-the-state-of-dynamo-dev-runs');
    const env = { ...fakeEnv(h), DYNAMO_DEV_HOME: stateDir };
    const [a, b] = [await spawnTree('ignore', runEnv(stateDir, ID)), await spawnTree('honour', runEnv(stateDir, ID))];
    const sup = deadPid();
    await writeFakeRun(stateDir, {
      id: ID, recipe: 'agg-router', state: 'stopping', supervisor: { pid: sup, startTicks: 1 },
      processes: [{ name: 'agg-0', pid: a.pid, startTicks: a.startTicks, descendants: a.descendants }, { name: 'agg-1', pid: b.pid, startTicks: b.startTicks, descendants: b.descendants }],
    });
    const logs = join(stateDir, 'runs', ID, 'logs');
    expect(logs.length).toBeGreaterThan(80);

    const term = openTerminal([process.execPath, BIN, 'status'], env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(0);
    const lines = stripTerm(term.raw()).replace(/\r/g, '').replace(/\n$/, '').split('\n');
    for (const l of lines.filter((x) => x !== logs)) expect(visibleLength(l), `wider than 80: ${l}`).toBeLessThanOrEqual(80);
    const row = (name: string) => words(lines.find((l) => l.startsWith(`  ${name} `)) ?? '').slice(0, 5);
    expect(row('agg-0')).toEqual(['agg-0', String(a.pid), 'yes', 'no', 'orphaned']);
    expect(row('agg-1')).toEqual(['agg-1', String(b.pid), 'yes', 'no', 'orphaned']);
    const first = lines.findIndex((l) => l.startsWith(`run ${ID}`));
    const head = words(`run ${ID} agg-router orphaned (stop cut short: 2 of 2 processes still running)`);
    expect(words(lines.slice(first, first + 2).join(' ')).slice(0, head.length)).toEqual(head);
    const why = `! its supervisor (pid ${sup}) died while stopping it; agg-0 (pid ${a.pid}), agg-1 (pid ${b.pid}) still running and nothing stops them; stop them with:`;
    const at = lines.findIndex((l) => l.startsWith('  ! its supervisor'));
    const cmd = lines.indexOf(`    dynamo-dev teardown --run ${ID}`);
    expect(cmd, lines.join('\n')).toBeGreaterThan(at + 1);
    expect(words(lines.slice(at, cmd).join(' '))).toEqual(words(why));
    expect(lines.slice(-2)).toEqual(['  logs:', logs]);

    // Piped: each of those on one line, the rows the same.
    const piped = await runCli(['status'], env);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain(`\n  ${why}\n    dynamo-dev teardown --run ${ID}\n`);
    expect(piped.stdout.endsWith(`\n  logs: ${logs}`)).toBe(true);
    expect(piped.stdout).toMatch(new RegExp(`\\n {2}agg-0 +${a.pid} +yes +no +orphaned `));

    // JSON: alive, not ready (their stop began), as the READY column.
    const js = await runCli(['status', '--json'], env);
    const doc = (JSON.parse(js.stdout) as { runs: { state: string; processes: { name: string; alive: boolean; ready: boolean }[] }[] }).runs[0];
    expect([doc.state, ...doc.processes.map((p) => [p.name, p.alive, p.ready])]).toEqual(['orphaned', ['agg-0', true, false], ['agg-1', true, false]]);

    const td = await runCli(['teardown', '--grace', '1'], env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    for (const pid of [a.pid, b.pid]) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });
});
