import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { cacheQwen3 } from '../helpers/runs.js';

// Every read of a file we did not write is bounded in time and size (issue 29): a FIFO, a 1 GiB
// file, a link to someone's secret, a BOM, a document nested 100,000 deep where a command reads a
// stored bench result or the Hugging Face cache's refs/main. Each command answers within seconds,
// one line naming the file and what is wrong, and never prints the file's bytes. (They hung for
// good on a FIFO: bench show/list, doctor "timed out after 5000 ms" and never exited, up and kv.)

const newHome = tempHomes('dd-foreign-');
const STORED = join(FIXTURES, 'bench', 'state');
const ROUTING = '20261205-101500-000-routing';
const AGG = '20261205-110200-000-agg-vs-disagg';

function benchHome() {
  const home = newHome();
  cpSync(STORED, home.stateDir, { recursive: true });
  return { home, env: fakeEnv(home, { vars: { LANG: 'C.UTF-8' } }), result: (id: string) => join(home.stateDir, 'bench', id, 'result.json') };
}

describe('bench show / list read stored results bounded', () => {
  it('a FIFO: show says so in one line (exit 2), list lists it with why and the others, both at once', async () => {
    const { env, result } = benchHome();
    rmSync(result(ROUTING));
    execFileSync('mkfifo', [result(ROUTING)]);
    const show = await runCli(['bench', 'show', ROUTING], env, { timeoutMs: 10_000 });
    expect([show.code, show.stderr]).toEqual([2, `dynamo-dev: ${result(ROUTING)}: is a named pipe (FIFO), not a regular file; not a bench result`]);
    const list = await runCli(['bench', 'list'], env, { timeoutMs: 10_000 });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(AGG);
    expect(list.stdout).toMatch(new RegExp(`^${ROUTING} .*named pipe`, 'm'));
  });

  it('1 GiB: refused by its size before a byte is read (the message says the size, not a parse failure)', async () => {
    const { env, result } = benchHome();
    truncateSync(result(ROUTING), 1024 ** 3);
    const show = await runCli(['bench', 'show', ROUTING, '--json'], env, { timeoutMs: 10_000 });
    expect([show.code, show.stderr]).toEqual([2, `dynamo-dev: ${result(ROUTING)}: is 1.0 GiB, more than the 16.0 MiB read at most; not a bench result`]);
  });

  it('a link to a secret file is not followed and its bytes are never printed; text that is not JSON is said without quoting it', async () => {
    const { home, env, result } = benchHome();
    const secret = join(home.dir, 'secret');
    writeFileSync(secret, 'password=hunter2');
    rmSync(result(ROUTING));
    symlinkSync(secret, result(ROUTING));
    const linked = await runCli(['bench', 'show', ROUTING], env);
    expect([linked.code, linked.stderr]).toEqual([2, `dynamo-dev: ${result(ROUTING)}: is a symbolic link, which is not followed; not a bench result`]);
    rmSync(result(ROUTING));
    writeFileSync(result(ROUTING), 'password=hunter2');
    const text = await runCli(['bench', 'show', ROUTING], env);
    expect(text.code).toBe(2);
    expect(text.stderr).toBe(`dynamo-dev: ${result(ROUTING)}: not JSON (invalid from the first bytes)`);
    const list = await runCli(['bench', 'list', '--json'], env);
    expect(list.stdout).not.toContain('hunter2');
  });

  it('a byte-order mark before the document is read past; a document nested 100,000 deep is refused in one line (no stack overflow, --json too)', async () => {
    const { env, result } = benchHome();
    const text = readFileSync(result(ROUTING), 'utf8');
    writeFileSync(result(ROUTING), `\uFEFF${text}`);
    const bom = await runCli(['bench', 'show', ROUTING, '--json'], env);
    expect(bom.code, bom.stderr).toBe(0);
    expect(JSON.parse(bom.stdout).id).toBe(ROUTING);
    writeFileSync(result(AGG), `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    for (const args of [['bench', 'show', AGG, '--json'], ['bench', 'show', AGG]]) {
      const deep = await runCli(args, env);
      expect([args, deep.code, deep.stderr]).toEqual([args, 2, `dynamo-dev: ${result(AGG)}: nested deeper than 64 levels; a bench result never is`]);
    }
    const list = await runCli(['bench', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
  });
});

describe('the Hugging Face cache\'s refs/main is read bounded: doctor, up, up --dry-run and kv answer', () => {
  for (const kind of ['a FIFO', '1 GiB']) {
    it(`refs/main is ${kind}: each command ends (within the 15 s bound of the test), no "timed out"`, async () => {
      const home = newHome();
      cacheQwen3(home.hfCache);
      const ref = join(home.hfCache, 'models--Qwen--Qwen3-0.6B', 'refs', 'main');
      rmSync(ref);
      if (kind === 'a FIFO') execFileSync('mkfifo', [ref]);
      else {
        writeFileSync(ref, '');
        truncateSync(ref, 1024 ** 3);
      }
      const env = fakeEnv(home, { gpu: 'laptop-570', python: true });
      const runs: [string[], number[]][] = [
        [['doctor', '--json'], [0, 1]],
        [['up', 'agg-router', '--dry-run', '--json'], [0]],
        [['kv', 'Qwen/Qwen3-0.6B', '--json'], [0]],
      ];
      for (const [args, codes] of runs) {
        const r = await runCli(args, env, { timeoutMs: 15_000 });
        expect([args, codes.includes(r.code ?? -1), r.stdout + r.stderr]).toEqual([args, true, expect.not.stringMatching(/timed out after/)]);
      }
    });
  }
});
