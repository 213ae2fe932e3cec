import { lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { tempHome } from '../../helpers/cli.js';
import { deadPid, writeFakeRun } from '../../helpers/proc-trees.js';
import { createRunDir, listRuns, readRun } from '../../../src/run/state.js';
import { UserError } from '../../../src/errors.js';

// A run.json that cannot be read is named with the system's reason (never taken for "no such
// run"); a bad record costs one warning line on stderr per file, however often it is read; and
// the folders a run writes its logs and discovery files to are private to the user.
// This file never calls onRecordWarning: the warnings go where a user sees them, stderr.

const homes: ReturnType<typeof tempHome>[] = [];
const home = () => {
  const h = tempHome('dd-unreadable-');
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach((h) => h.cleanup()));
afterEach(() => {
  vi.restoreAllMocks();
});

describe('a run.json that cannot be read', () => {
  it('a symlink loop: --run names the file and why, not "no such run" (a link is never followed: issue 29)', async () => {
    const h = home();
    await writeFakeRun(h.stateDir, { id: 'good', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    const dir = join(h.stateDir, 'runs', 'looped');
    mkdirSync(dir);
    symlinkSync(join(dir, 'run.json'), join(dir, 'run.json'));
    const err = await readRun(h.stateDir, 'looped').then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe(`--run looped: ${join(dir, 'run.json')} is not a valid run record: a symbolic link, which is not followed`);
  });
});

describe('a bad record among the runs', () => {
  it('is skipped with one warning line on stderr, however many times the runs are listed', async () => {
    const h = home();
    await writeFakeRun(h.stateDir, { id: 'good', state: 'stopped', supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    mkdirSync(join(h.stateDir, 'runs', 'bad'));
    writeFileSync(join(h.stateDir, 'runs', 'bad', 'run.json'), '{"id":');
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    expect((await listRuns(h.stateDir)).map((r) => r.id)).toEqual(['good']);
    expect((await listRuns(h.stateDir)).map((r) => r.id)).toEqual(['good']);
    const warnings = lines.filter((l) => l.includes('dynamo-dev: warning'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^dynamo-dev: warning: ${join(h.stateDir, 'runs', 'bad', 'run.json')}: skipped, not a valid run record: not JSON \\(.+\\)\\n$`));
  });
});

describe('a run folder', () => {
  it('its logs and discovery folders are private to the user (0700), like the run folder', () => {
    const h = home();
    mkdirSync(join(h.stateDir, 'runs'), { recursive: true, mode: 0o700 });
    const id = createRunDir(h.stateDir, 'r1');
    for (const d of ['', 'logs', 'discovery']) {
      expect(lstatSync(join(h.stateDir, 'runs', id, d)).mode & 0o777).toBe(0o700);
    }
  });
});
