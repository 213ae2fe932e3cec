import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStateDir, prepareStateDir, stateDirProblem } from '../../../src/run/state-dir.js';
import { UserError } from '../../../src/errors.js';
import { tempHome } from '../../helpers/cli.js';

// The state directory on disk: what a reader says of one that is missing, a file, under a file or
// writable by others, and what `up` creates.

const h = tempHome('dd-statedir-');
afterAll(() => h.cleanup());
let n = 0;
const fresh = () => join(h.dir, `s${n++}`);

async function refusal(p: Promise<unknown>): Promise<UserError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(UserError);
  return err as UserError;
}

describe('reading a state directory', () => {
  it('none yet, or no runs folder in it yet: nothing recorded (no error)', async () => {
    const s = fresh();
    expect(await checkStateDir(s)).toBe(false);
    mkdirSync(s, { mode: 0o700 });
    expect(await checkStateDir(s)).toBe(false);
    mkdirSync(join(s, 'runs'), { mode: 0o700 });
    expect(await checkStateDir(s)).toBe(true);
  });

  it('a path that runs through a file: says so, choose another', async () => {
    const f = fresh();
    writeFileSync(f, 'x');
    const err = await refusal(checkStateDir(join(f, 'state')));
    expect(err.message).toBe(`${join(f, 'state')}: a part of this path is a file, not a folder; choose another --state-dir`);
  });

  it('a state directory that is a file: named, with no chmod advice', async () => {
    const f = fresh();
    writeFileSync(f, 'x');
    const err = await refusal(checkStateDir(f));
    expect(err.message).toBe(`${f}: the state directory is a file, not a folder; move it away or choose another with --state-dir`);
    expect(err.fix).toBeUndefined();
  });

  it('a runs folder others may write: refused with the chmod that fixes it', async () => {
    const s = fresh();
    mkdirSync(join(s, 'runs'), { recursive: true, mode: 0o700 });
    chmodSync(s, 0o700);
    chmodSync(join(s, 'runs'), 0o777);
    const err = await refusal(checkStateDir(s));
    expect(err.message).toMatch(/runs: the runs folder is writable by everyone \(mode 0777\)/);
    expect(err.fix).toBe(`chmod go-w ${join(s, 'runs')}   (and chown it to yourself), or use another --state-dir`);
  });
});

describe('up preparing the state directory', () => {
  it('creates it and its runs folder private to the user (0700)', async () => {
    const s = join(fresh(), 'deep', 'state');
    await prepareStateDir(s);
    expect(statSync(s).mode & 0o777).toBe(0o700);
    expect(statSync(join(s, 'runs')).mode & 0o777).toBe(0o700);
    expect(await checkStateDir(s)).toBe(true);
    await prepareStateDir(s); // twice is fine
  });

  it('an existing one others may write is refused, not fixed behind the user\'s back', async () => {
    const s = fresh();
    mkdirSync(s);
    chmodSync(s, 0o775);
    const err = await refusal(prepareStateDir(s));
    expect(err.message).toMatch(/the state directory is writable by its group \(mode 0775\)/);
    expect(statSync(s).mode & 0o777).toBe(0o775);
  });

  it('a runs folder that is a file: refused by name', async () => {
    const s = fresh();
    mkdirSync(s, { mode: 0o700 });
    writeFileSync(join(s, 'runs'), 'x');
    expect((await refusal(prepareStateDir(s))).message).toBe(`${join(s, 'runs')}: the runs folder is a file, not a folder; move it away or choose another with --state-dir`);
  });
});

describe('the rule on platforms without uids', () => {
  it('only "is it a folder" is asked', () => {
    expect(stateDirProblem('/s', { isDirectory: () => true, uid: 5, mode: 0o40777 }, null)).toBeNull();
  });
});
