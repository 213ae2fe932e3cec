import { afterEach, describe, expect, it } from 'vitest';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, runCli } from '../helpers/cli.js';
import { markedPids } from '../helpers/runs.js';
import { upHarness } from '../helpers/up-run.js';

// A full disk during `up` (issue 26): before, "dynamo-dev: ENOSPC: no space left on device, write"
// (or, detached, "unexpected error: ..." and an up that never returned). What is simulated: the
// kernel's answer to writing data (ENOSPC) under one folder, by test/fixtures/host/full-disk.cjs
// loaded into the CLI and its detached supervisor with NODE_OPTIONS; creating folders and empty
// files still works, as on a disk with inodes left. The disk itself is not filled.

const up = upHarness('dd-full-disk-');
afterEach(() => up.cleanup());

async function fullUnder(sub: string) {
  const s = await up.setup();
  s.env.FULL_DISK_UNDER = sub ? join(s.stateDir, sub) : s.stateDir;
  s.env.NODE_OPTIONS = `--require "${join(FIXTURES, 'host', 'full-disk.cjs')}"`;
  return s;
}

const ONE_LINE = /^dynamo-dev: cannot write (\S+): no space left on device \(ENOSPC\); free space on that filesystem \(df -h \S+\) or use a state directory on another one \(--state-dir DIR or DYNAMO_DEV_HOME=DIR\)$/;

describe('up on a full disk', () => {
  it('the state dir full: one line naming up.lock and what to do, exit 1, nothing started', async () => {
    const s = await fullUnder('');
    for (const detach of [[], ['--detach']]) {
      const r = await runCli(['up', 'agg', '--no-preflight', ...detach, ...s.sets], s.env, { timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(ONE_LINE);
      expect(ONE_LINE.exec(lines[0])![1]).toBe(join(s.stateDir, 'up.lock'));
      expect(r.stdout).not.toMatch(/^run /m);
    }
  });

  it('runs/ full (run.json cannot be written): up fails with that path, foreground and detached, no process left', async () => {
    const s = await fullUnder('runs');
    for (const detach of [[], ['--detach']]) {
      const r = await runCli(['up', 'agg', '--no-preflight', ...detach, ...s.sets], s.env, { timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).not.toMatch(/unexpected error|ENOSPC: no space left on device, write/);
      const id = /^run (\S+)/m.exec(r.stdout)![1];
      const path = join(s.stateDir, 'runs', id, 'run.json');
      expect(r.stderr.trim().split('\n')).toEqual([
        `✗ up failed: cannot write ${path}: no space left on device (ENOSPC); free space on that filesystem (df -h ${join(s.stateDir, 'runs', id)}) or use a state directory on another one (--state-dir DIR or DYNAMO_DEV_HOME=DIR); nothing was started`,
      ]);
      expect(markedPids(join(realpathSync(s.stateDir), 'runs', id))).toEqual([]);
    }
  });

  it('runs/ with room for one small file (run.json written once, then ENOSPC, as on a nearly full tmpfs): nothing starts, one line', async () => {
    const s = await fullUnder('runs');
    s.env.FULL_DISK_AFTER_WRITES = '1';
    for (const detach of [[], ['--detach']]) {
      const r = await runCli(['up', 'mocker', '--no-preflight', ...detach, ...s.sets], s.env, { timeoutMs: 30_000 });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const id = /^run (\S+)/m.exec(r.stdout)![1];
      expect(r.stdout).not.toMatch(/^starting /m);
      expect(r.stderr.trim().split('\n')).toEqual([
        `✗ up failed: cannot write ${join(s.stateDir, 'runs', id, 'run.json')}: no space left on device (ENOSPC); free space on that filesystem (df -h ${join(s.stateDir, 'runs', id)}) or use a state directory on another one (--state-dir DIR or DYNAMO_DEV_HOME=DIR); nothing was started`,
      ]);
      expect(markedPids(join(realpathSync(s.stateDir), 'runs', id))).toEqual([]);
    }
  });

  it('the disk fills once the run starts (statfs said room): the first record that cannot name a new pid stops what started; one line, no agg-0 blamed', async () => {
    const s = await fullUnder('runs');
    Object.assign(s.env, { FULL_DISK_AFTER_WRITES: '1', FULL_DISK_STATFS: 'room' });
    for (const detach of [[], ['--detach']]) {
      const r = await runCli(['up', 'mocker', '--no-preflight', ...detach, ...s.sets], s.env, { timeoutMs: 30_000 });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const id = /^run (\S+)/m.exec(r.stdout)![1];
      // The first spawn's record failed: nothing after it was started.
      expect(r.stdout.match(/^starting /gm)).toHaveLength(1);
      expect(r.stdout + r.stderr).not.toMatch(/agg-0 exited|blame|unexpected error/);
      // Said once (was: the ENOSPC line once per write, 9 times), after the stop's own line.
      expect(r.stderr.match(/ENOSPC/g)).toHaveLength(1);
      expect(r.stderr.trim().split('\n').at(-1)).toBe(
        `✗ up failed: cannot write ${join(s.stateDir, 'runs', id, 'run.json')}: no space left on device (ENOSPC); free space on that filesystem (df -h ${join(s.stateDir, 'runs', id)}) or use a state directory on another one (--state-dir DIR or DYNAMO_DEV_HOME=DIR); stopping what was started`,
      );
      expect(markedPids(join(realpathSync(s.stateDir), 'runs', id))).toEqual([]);
    }
  });
});
