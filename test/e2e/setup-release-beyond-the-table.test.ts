import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';

// A --release newer than the release table knows is refused by setup, with the release that would
// do, before anything is installed (issue 29 asked for this behaviour pinned; the table's own
// limits live in src/plan/dynamo-releases.ts).
const home = tempHomes('dd-setup-release-');

describe('setup --release past the release table', () => {
  it.each([['with --dry-run', ['--dry-run']], ['without --dry-run', []]])('9.9.9 %s: one line naming the release and what would do, exit 2, nothing installed', async (_, extra) => {
    const h = home();
    const base = fakeEnv(h);
    const log = join(h.dir, 'commands.log');
    const env = { ...base, PATH: [join(FIXTURES, 'bin', 'setup'), base.PATH].join(delimiter), FAKE_SETUP_FIXTURES: FIXTURES, FAKE_SETUP_LOG: log, XDG_CACHE_HOME: join(h.dir, 'cache') };
    const r = await runCli(['setup', '--release', '9.9.9', ...(extra as string[])], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dynamo-dev: --release 9\.9\.9 is newer than the release table knows; what would: --release 1\.6\.1; /);
    expect(r.stderr.split('\n')).toHaveLength(1);
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(h.dir, 'cache', 'dynamo-dev', 'envs'))).toBe(false);
    expect(existsSync(log)).toBe(false);
  });
});
