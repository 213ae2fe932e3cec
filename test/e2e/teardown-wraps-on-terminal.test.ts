import { afterEach, describe, expect, it } from 'vitest';
import { BIN, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { deadPid, isAlive, killStarted, runEnv, spawnTree, waitUntil, writeFakeRun } from '../helpers/proc-trees.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';
import { visibleLength } from '../../src/ui/fit.js';

// teardown on an 80x24 terminal (script(1)) of a run whose supervisor died while stopping it: the
// plan line, a row whose note does not fit (its leader had already exited) and the ignored-SIGTERM
// line with its log path all wrap to 80 columns under their start, no word cut by the terminal;
// piped, the same teardown prints each as one line.

const home = tempHomes('dd-td-wrap-');
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
  killStarted();
});

/** What stays on the screen: a line erased with CR + ESC[K (the countdown redrawing itself) is gone. */
const screen = (raw: string) => stripTerm(raw.replace(/[^\n]*\r\u001b\[K/g, '')).replace(/\r/g, '');
const words = (s: string) => s.split(/\s+/).filter(Boolean);
const ID = '20261202-033000-agg-router';

/** A run recorded as `stopping` by a supervisor that is dead: agg-0's leader already gone (its group lives on), agg-1 ignores SIGTERM. */
async function strandedRun(stateDir: string) {
  const leaderGone = await spawnTree('leader-first', runEnv(stateDir, ID));
  process.kill(leaderGone.pid, 'SIGKILL');
  await waitUntil(() => !isAlive(leaderGone.pid), 'agg-0\'s leader to be gone');
  const stubborn = await spawnTree('ignore', runEnv(stateDir, ID));
  const sup = deadPid();
  await writeFakeRun(stateDir, {
    id: ID, recipe: 'agg-router', state: 'stopping', supervisor: { pid: sup, startTicks: 1, detached: true },
    processes: [
      { name: 'agg-0', pid: leaderGone.pid, startTicks: leaderGone.startTicks, descendants: leaderGone.descendants },
      { name: 'agg-1', pid: stubborn.pid, startTicks: stubborn.startTicks, descendants: stubborn.descendants },
    ],
  });
  return { sup, pids: [...leaderGone.descendants, ...stubborn.descendants].map((d) => d.pid).concat(stubborn.pid) };
}

describe('teardown on an 80-column terminal', () => {
  it('wraps the plan, the note and the log line to 80 columns, every word kept; piped, one line each', async () => {
    const h = home();
    const { sup, pids } = await strandedRun(h.stateDir);
    const term = openTerminal([process.execPath, BIN, 'teardown', '--grace', '1'], fakeEnv(h), { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(0);
    const lines = screen(term.raw()).replace(/\n$/, '').split('\n');
    // Nothing wider than the terminal but a path alone at column 0 (one token, copied whole).
    for (const l of lines.filter((x) => /\s/.test(x))) expect(visibleLength(l), `wider than 80: ${l}`).toBeLessThanOrEqual(80);

    // The plan line: the dead supervisor named, continued under the run with two spaces.
    const plan = `stopping run ${ID} (2 processes, orphaned: its supervisor (pid ${sup}) died while stopping it; teardown stops what is left; SIGKILL after 1 s)`;
    const at = lines.findIndex((l) => l.startsWith(`stopping run ${ID} `));
    const planLines = lines.slice(at, lines.findIndex((l, i) => i > at && !/^ {2}[^\s✓✗-]/.test(l)));
    expect(planLines.length).toBeGreaterThan(1);
    for (const l of planLines.slice(1)) expect(l).toMatch(/^ {2}\S/);
    expect(words(planLines.join(' '))).toEqual(words(plan));

    // agg-0's row: its note wraps under the name (6 spaces), every word there, in order.
    const row0 = lines.findIndex((l) => /^ {2}✓ agg-0 +pid \d+ +SIGKILL/.test(l));
    expect(row0, lines.join('\n')).toBeGreaterThanOrEqual(0);
    expect(lines[row0 + 1]).toMatch(/^ {6}\S/);
    const rest0 = lines.slice(row0, lines.findIndex((l, i) => i > row0 && !/^ {6}\S/.test(l)));
    expect(rest0.join(' ')).toContain('leader had already exited;');
    expect(words(rest0.join(' '))).toEqual(expect.arrayContaining(words('leader had already exited; its group had not')));
    // agg-1: SIGKILL, then its ignored-SIGTERM line, the log path whole on a line of its own: under
    // it, or at column 0 when it is wider than the room beside the gutter (to copy it whole).
    const row1 = lines.findIndex((l) => /^ {2}✓ agg-1 +pid \d+ +SIGKILL/.test(l));
    expect(lines[row1 + 1]).toBe('    agg-1 ignored SIGTERM; its log:');
    const log = `${h.stateDir}/runs/${ID}/logs/agg-1.log`;
    expect(lines[row1 + 2]).toBe(log.length > 74 ? log : `      ${log}`);
    expect(lines.at(-2)).toMatch(/^nothing remains: stopped 2 processes in [\d.]+ m?s$/);
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);

    // Piped: the same teardown prints each of those as one line.
    const again = await strandedRun(h.stateDir);
    const piped = await runCli(['teardown', '--grace', '1'], fakeEnv(h), { timeoutMs: 20_000 });
    expect(piped.code, piped.stdout + piped.stderr).toBe(0);
    expect(piped.stdout).toContain(`stopping run ${ID} (2 processes, orphaned: its supervisor (pid ${again.sup}) died while stopping it; teardown stops what is left; SIGKILL after 1 s)\n`);
    expect(piped.stdout).toMatch(/ {2}✓ agg-0 +pid \d+ +SIGKILL +[\d.]+ m?s {2}leader had already exited; its group had not\n/);
    expect(piped.stdout).toContain(`    agg-1 ignored SIGTERM; its log: ${h.stateDir}/runs/${ID}/logs/agg-1.log\n`);
    for (const pid of again.pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });
});
