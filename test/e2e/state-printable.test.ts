import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { killStarted, spawnLone, spawnTree, writeFakeRun } from '../helpers/proc-trees.js';

// Issue 29 (lows): what reaches the terminal from the state directory is printable. A run.json
// whose recipe, model or frontend URL holds escape sequences (anyone who can write the state
// directory wrote it) no longer sets the window title or clears the screen through `status`; a
// state directory whose path holds a newline or an escape (DYNAMO_DEV_HOME) is refused in one line,
// exit 2, nothing made (before: log paths that do not exist were printed, escapes echoed).

const homes: ReturnType<typeof tempHome>[] = [];
function home() {
  const h = tempHome('dd-printable-');
  homes.push(h);
  return h;
}
afterEach(() => killStarted());
afterAll(() => homes.forEach((h) => h.cleanup()));

const ESC = '\u001b]0;PWNED\u0007\u001b[2J\u001b]8;;http://evil/\u001b\\';

describe('status of a run.json holding escape sequences', () => {
  it('prints them as plain text (no ESC, no BEL reaches the terminal); --json keeps the record as stored', async () => {
    const h = home();
    const sup = await spawnLone('node-dynamo-dev-up');
    const fe = await spawnTree('honour');
    const id = '20261130-101500-agg';
    await writeFakeRun(h.stateDir, {
      id, state: 'ready', supervisor: { pid: sup.pid, startTicks: sup.startTicks },
      processes: [{ name: 'frontend', pid: fe.pid, startTicks: fe.startTicks, ports: { http: 8000 } }],
    });
    const path = join(h.stateDir, 'runs', id, 'run.json');
    const rec = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...rec, recipe: `agg${ESC}`, model: `Qwen${ESC}`, frontendUrl: `http://127.0.0.1:8000/${ESC}` }));
    const env = fakeEnv(h);
    for (const args of [['status'], ['status', '--run', id], ['status', '--all']]) {
      const r = await runCli(args, env);
      expect([args, r.code]).toEqual([args, 0]);
      expect(r.stdout).toMatch(/^run 20261130-101500-agg {2}agg {2}/m);
      expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    }
    const doc = JSON.parse((await runCli(['status', '--json'], env)).stdout);
    expect(doc.runs[0].recipe).toBe(`agg${ESC}`);
  });
});

describe('a state directory whose path holds a control character', () => {
  it.each([['a newline', 'a\nb'], ['an escape character', 'a\u001b[2Jb']])('%s in DYNAMO_DEV_HOME: refused in one line naming the variable, exit 2, nothing made', async (what, name) => {
    const h = home();
    const dir = join(h.dir, name);
    const env = fakeEnv({ stateDir: dir, hfCache: h.hfCache });
    for (const args of [['status'], ['logs'], ['up', 'agg', '--dry-run'], ['teardown'], ['bench', 'list']]) {
      const r = await runCli(args, env);
      expect([args, r.code, r.stdout]).toEqual([args, 2, '']);
      expect(r.stderr).toBe(`dynamo-dev: DYNAMO_DEV_HOME: the state directory ${JSON.stringify(dir)} holds ${what}; the paths printed from it (runs, logs) would not be the real ones\nfix: set DYNAMO_DEV_HOME to a folder whose path has no control characters, or give --state-dir DIR`);
      expect(existsSync(dir)).toBe(false);
    }
    // --state-dir DIR overrides it, as the fix says.
    const ok = await runCli(['status', '--state-dir', h.stateDir], env);
    expect(ok.code, ok.stderr).toBe(0);
  });
});
