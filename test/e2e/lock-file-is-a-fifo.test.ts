import { afterEach, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { records, upHarness } from '../helpers/up-run.js';

// Issue 29: a FIFO where up's lock lives gave a raw "EINVAL: ftruncate" (or could hang an open).
// It is not ours: one line naming it, exit 2, nothing started, the FIFO left in place.

const up = upHarness('dd-lock-fifo-');
afterEach(() => up.cleanup());

it('a FIFO at STATE/up.lock: up exits 2 naming the file and how to move it, nothing started, the FIFO kept', async () => {
  const s = await up.setup();
  mkdirSync(s.stateDir, { recursive: true, mode: 0o700 });
  const lock = join(s.stateDir, 'up.lock');
  execFileSync('mkfifo', [lock]);
  const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
  expect([r.code, r.stderr]).toEqual([2, `dynamo-dev: ${lock}: not a regular file, so not our lock; nothing was started\nfix: move it away (it is not ours to remove), then run the command again: mv ${lock} ${lock}.moved`]);
  expect(r.stdout).toMatch(/^up agg-router · \S+ · Dynamo [\d.]+ · \S+$/);
  expect(records(s.stateDir)).toEqual([]);
  expect(lstatSync(lock).isFIFO()).toBe(true);
});
