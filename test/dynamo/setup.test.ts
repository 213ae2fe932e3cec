import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bindable } from '../helpers/ports.js';
import { cleanup, cli, json, portBlock, portSets, realHome, survivors, upDetached } from './helpers.js';
import { cacheRoot, findPython } from './venv.mjs';

// `dynamo-dev setup` as a new user without a GPU runs it, against the package index: the managed
// environment built from scratch in the test's own ${XDG_CACHE_HOME}, then `up mocker` with no
// --python, started with that environment because python3 on PATH has no Dynamo. pip's downloads
// are kept in ~/.cache/dynamo-dev/pip (as test/dynamo/venv.mjs keeps the test venv's), so a second
// run of this file installs from that cache.

afterEach(cleanup);

interface StatusDoc { runs: { id: string; state: string; python: { interpreter: string; source: string; managedDir: string | null } }[] }
interface TeardownDoc { remaining: unknown[] }

/** A folder whose python3 (and python3.X) is a bare venv of the base Python: no Dynamo, no pip. */
function pythonWithoutDynamo(dir: string): string {
  const { python } = findPython();
  const venv = join(dir, 'no-dynamo');
  const r = spawnSync(python, ['-m', 'venv', '--without-pip', venv], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${python} -m venv --without-pip failed: ${r.stderr}`);
  return join(venv, 'bin');
}

describe('setup from the package index, then up mocker with the environment it made', () => {
  it('builds ai-dynamo 1.6.1 for the mocker; a second setup is a no-op under 2 s; up mocker without --python answers the printed curl; teardown leaves nothing', async () => {
    const base = await portBlock();
    const home = realHome();
    const noDynamo = pythonWithoutDynamo(home.dir);
    // PATH as a user's: no test venv, no AIPerf venv, a python3 without Dynamo first.
    const PATH = [noDynamo, ...(process.env.PATH ?? '').split(delimiter).filter((d) => d && !d.includes('dynamo-dev') && !d.includes('dd-dynamo-'))].join(delimiter);
    Object.assign(home.env, { PATH, PIP_CACHE_DIR: join(cacheRoot(), 'pip'), VIRTUAL_ENV: undefined });
    const hasDynamo = spawnSync('python3', ['-c', 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("dynamo") else 3)'], { env: home.env as NodeJS.ProcessEnv });
    expect(hasDynamo.status, 'python3 on the test PATH must not have Dynamo').toBe(3);

    const envDir = join(home.dir, 'cache', 'dynamo-dev', 'envs', '1.6.1-mocker');
    const setup = await cli(['setup'], home, 600_000);
    expect(setup.code, setup.stdout + setup.stderr).toBe(0);
    expect(setup.stdout.split('\n')[0]).toMatch(/^machine: no NVIDIA GPU /);
    expect(setup.stdout).toContain('chose: ai-dynamo 1.6.1 for the mocker engine: no NVIDIA GPU here');
    expect(setup.stdout).toMatch(new RegExp(`^✓ ready in \\d+ s: ai-dynamo 1\\.6\\.1 \\(mocker\\) in ${envDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    expect(setup.stdout).toMatch(/^✓ \[3\/3\] import dynamo\.frontend, dynamo\.mocker/m);
    const marker = JSON.parse(readFileSync(join(envDir, 'dynamo-dev-setup.json'), 'utf8'));
    expect(marker).toMatchObject({ release: '1.6.1', engine: 'mocker', installer: expect.stringMatching(/^(pip|uv)$/), python: join(envDir, 'bin', 'python') });
    // Either way is honest: the normal install where NVIDIA's index answers, else without the placeholder, said and recorded.
    if (marker.dependencies === 'without-placeholder') {
      expect(marker.placeholder).toMatchObject({ name: 'aisimulate' });
      expect(setup.stdout.split('\n').filter((l) => l.includes('is a placeholder package'))).toHaveLength(1);
    } else {
      expect(marker.dependencies).toBe('normal');
    }

    const again = await cli(['setup'], home);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`✓ ready: ai-dynamo 1.6.1 (mocker) was already set up in ${envDir}`);
    expect(again.durationMs).toBeLessThan(2000);

    const up = await upDetached(['mocker', ...portSets(base)], home);
    expect(up.code, up.stdout + up.stderr).toBe(0);
    expect(up.stdout).toMatch(/✓ ready in [\d.]+ s {2}run \S+-mocker/);
    // The curl up prints, sent as it is: its URL and body.
    const curl = up.stdout.split('\n').find((l) => l.startsWith('curl '));
    const m = /^curl -s (\S+) -H 'Content-Type: application\/json' -d '(.*)'$/.exec(curl ?? '');
    expect(m, up.stdout).not.toBeNull();
    expect(m![1]).toBe(`http://127.0.0.1:${base}/v1/chat/completions`);
    const res = await fetch(m![1], { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: m![2] });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { model: string; choices: { message: { content: string | null } }[]; usage: { completion_tokens: number } };
    expect(answer.model).toBe('dynamo-dev/tiny');
    expect(answer.choices).toHaveLength(1);
    expect(answer.usage.completion_tokens).toBeGreaterThan(0);

    const st = json<StatusDoc>(await cli(['status', '--json'], home));
    expect(st.runs[0]).toMatchObject({ state: 'ready', python: { interpreter: join(envDir, 'bin', 'python'), source: 'managed', managedDir: envDir } });

    const td = await cli(['teardown', '--json'], home);
    expect(td.code, td.stderr).toBe(0);
    expect(json<TeardownDoc>(td).remaining).toEqual([]);
    expect(survivors(home.stateDir)).toEqual([]);
    expect(await Promise.all([base, base + 1, base + 2].map(bindable))).toEqual([true, true, true]);
    // The environment stays for the next up; only the run is gone.
    expect(existsSync(join(envDir, 'bin', 'python'))).toBe(true);
  }, 900_000);
});
