import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { groupMembersWith } from '../helpers/runs.js';
import { cleanup, cli, portBlock, portSets, python, realHome, until } from './helpers.js';

// `up mocker --script` is a standalone bash script: run it against the released Dynamo. Its
// readiness waits (model listed, both workers counted, one completion) must end, and its trap must
// stop every process group it started. The groups it reports are killed after the test either way.

const groups: number[] = [];
/** RUN_DIR=... as the script's processes inherit it: what makes a group member this test's. */
let mine = '';
afterEach(async () => {
  for (const g of groups.splice(0)) {
    if (groupMembersWith(g, mine).length === 0) continue;
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  await cleanup();
});

describe('up mocker --script against the released Dynamo', () => {
  it('reaches ready on the real readiness signals and its trap stops every group on SIGTERM', async () => {
    const home = realHome();
    const base = await portBlock();
    const gen = await cli(['up', 'mocker', '--script', '--python', python(), ...portSets(base)], home);
    expect(gen.code, gen.stderr).toBe(0);
    const path = join(home.dir, 'run.sh');
    writeFileSync(path, gen.stdout);
    mine = `RUN_DIR=${join(home.dir, 'script-run')}`;
    const child = spawn('bash', [path], {
      env: { ...home.env, RUN_DIR: join(home.dir, 'script-run'), READY_TIMEOUT: '60' } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      for (const m of d.toString().matchAll(/started \S+ \(pid (\d+)\)/g)) groups.push(Number(m[1]));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await until('the script says ready', () => (out.includes('ready: http://127.0.0.1:') ? true : undefined), 60_000);
    expect(groups).toHaveLength(3);
    expect(out).not.toContain('FAILED');
    // Each group is this test's by RUN_DIR, so the check after the stop can tell.
    for (const g of groups) expect(groupMembersWith(g, mine).length).toBeGreaterThan(0);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(out).toMatch(/stopping 3 process groups/);
    expect(groups.flatMap((g) => groupMembersWith(g, mine))).toEqual([]);
    // The logs the script's run wrote: a healthy run, so no error or warning finding.
    const dg = await cli(['diagnose', join(home.dir, 'script-run'), '--json'], home);
    const doc = JSON.parse(dg.stdout) as { files: number; findings: { severity: string }[] };
    expect(doc.files).toBe(3);
    expect(doc.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    expect(dg.code).toBe(0);
  });
});
