import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';

// Through the built binary: a recipe whose YAML aliases cannot be expanded is an input error,
// exit 2 and one line naming the file, with its real cause.
const h = tempHome('dd-alias-');
afterAll(() => h.cleanup());

async function up(name: string, text: string) {
  const p = join(h.dir, name);
  writeFileSync(p, text);
  return { p, r: await runCli(['up', p, '--dry-run'], fakeEnv(h)) };
}

describe('up with a recipe whose aliases cannot be expanded', () => {
  it('a list that contains itself: exit 2, one line naming the field (was an internal error, exit 1)', async () => {
    const { p, r } = await up('loop.yaml', 'name: t\nworkers: &w [*w]\n');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`dynamo-dev: ${p}: workers.0 refers back to workers (an alias inside its own anchor); a recipe cannot contain itself`);
  });

  it('an alias to no anchor: exit 2, naming the alias (was called an alias bomb)', async () => {
    const { p, r } = await up('typo.yaml', 'name: t\nmodel: *qwen\nworkers: [{role: agg}]\n');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(`dynamo-dev: ${p}: invalid YAML: Unresolved alias (the anchor must be set before the alias): qwen`);
  });
});
