import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN, fakeEnv, tempHome } from '../helpers/cli.js';
import { deadPid, isAlive, killStarted, runEnv, spawnTree, writeFakeRun } from '../helpers/proc-trees.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';

// teardown on a terminal (script(1), 80x24) of a run whose worker ignores SIGTERM: below the
// results, one line counts down to SIGKILL each second, and is gone once the worker is killed.

const homes: ReturnType<typeof tempHome>[] = [];
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
  killStarted();
});
afterAll(() => homes.forEach((h) => h.cleanup()));

/** What stays on the screen: a line erased with CR + ESC[K (the countdown redrawing itself) is gone. */
const screen = (raw: string) => stripTerm(raw.replace(/[^\n]*\r\u001b\[K/g, '')).replace(/\r/g, '');

describe('teardown on a terminal', () => {
  it('counts down to SIGKILL for a worker that ignores SIGTERM, then the countdown line is gone', async () => {
    const h = tempHome('dd-td-count-');
    homes.push(h);
    const honours = await spawnTree('honour', runEnv(h.stateDir, 'r1'));
    const stubborn = await spawnTree('ignore', runEnv(h.stateDir, 'r1'));
    await writeFakeRun(h.stateDir, {
      id: 'r1', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [
        { name: 'agg-0', pid: honours.pid, startTicks: honours.startTicks },
        { name: 'agg-1', pid: stubborn.pid, startTicks: stubborn.startTicks, descendants: [stubborn.engine] },
      ],
    });
    const term = openTerminal([process.execPath, BIN, 'teardown', '--grace', '3'], fakeEnv(h), { cols: 80, rows: 24 });
    terms.push(term);
    // agg-0 stops at once; then the line names agg-1 alone, counting down as the seconds pass.
    await term.waitFor(/✓ agg-0\s+pid \d+\s+SIGTERM/);
    await term.waitFor(/waiting for agg-1: SIGKILL in [12]s/);
    expect(await term.exit).toBe(0);
    const shown = [...stripTerm(term.raw()).matchAll(/waiting for agg-1: SIGKILL in (\d)s/g)].map((m) => Number(m[1]));
    expect(new Set(shown).size).toBeGreaterThanOrEqual(2);
    expect(shown).toEqual([...shown].sort((a, b) => b - a));
    expect(Math.max(...shown)).toBeLessThanOrEqual(3);
    const text = screen(term.raw());
    // At 80 columns the log path does not fit beside the text: it goes whole on the next line
    // (under it, or at column 0 when wider than the room there; teardown-wraps-on-terminal.test.ts).
    expect(text).toMatch(new RegExp(`✓ agg-1\\s+pid ${stubborn.pid}\\s+SIGKILL\\s+[\\d.]+ s\\n {4}agg-1 ignored SIGTERM; its log:\\n( {6})?/\\S+agg-1\\.log\\n`));
    // The countdown left nothing behind: no "waiting for" on the screen, the verdict last, a newline at the end.
    expect(text).not.toContain('waiting for');
    expect(text).toMatch(/nothing remains: stopped 2 processes in [\d.]+ m?s\nlogs kept: \S+\n$/);
    for (const pid of [honours.pid, stubborn.pid, stubborn.engine.pid]) expect(isAlive(pid)).toBe(false);
  });
});
