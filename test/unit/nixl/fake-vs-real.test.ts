import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';
import { groupMembers, probeNixl, type NixlProbeFacts } from '../../../src/host/ucx/nixl-probe.js';
import { recordedFacts, SETTINGS } from './fixtures.js';

// The fake nixl._api (test/fixtures/python/nixl/_api.py) run by the real adapter and the real
// probe script must give the facts the real NIXL 1.4.1 gave under the same setting (the
// recordings), so the e2e tests that use it see what a user would.

const tmp = mkdtempSync(join(tmpdir(), 'dd-fake-nixl-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// 45 s: under a load of 12+ on two cores the two Python processes' starts alone took past 20 s in a
// full suite ("the other process did not answer by the probe's deadline"); the deadline is tested elsewhere.
const probe = (vars: Record<string, string>, o: { timeoutMs?: number; tmpDir?: string } = {}) => probeNixl({
  python: 'python3',
  env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: o.tmpDir ?? tmp, PYTHONPATH: join(FIXTURES, 'python'), PYTHONDONTWRITEBYTECODE: '1', ...vars },
  mem: 'dram',
  timeoutMs: o.timeoutMs ?? 45_000,
});

/** What a verdict reads of the facts: everything but times, pids and paths of this run. */
const judged = (f: NixlProbeFacts) => ({
  stage: f.report?.stage, error: f.report?.error ?? null, ucxVersion: f.report?.ucxVersion, lane: f.lane, complaints: f.complaints,
  runError: f.runError, ucxEnv: f.ucxEnv, verified: f.report?.verified ?? null,
});

describe('the fake NIXL against the real recordings', () => {
  for (const name of Object.keys(SETTINGS)) {
    it(`${name}: the same stage, error, UCX version, lane and complaint lines`, async () => {
      const f = await probe({ FAKE_NIXL: 'by-env', ...SETTINGS[name] });
      expect(judged(f)).toEqual(judged(recordedFacts(name)));
      expect(f.killedLeftovers).toEqual([]);
      expect(groupMembers(f.pgid!)).toEqual([]);
    }, 60_000);
  }

  it('the fake moved the bytes for real (the probe verified 3 rounds each way) and left no file behind', async () => {
    // A folder of its own: what another test's probe left (one that ran past its deadline) is not this one's.
    const own = mkdtempSync(join(tmp, 'own-'));
    const f = await probe({ FAKE_NIXL: 'default' }, { tmpDir: own });
    expect(f.report?.verified).toBe(3);
    expect(readdirSync(own)).toEqual([]);
  }, 60_000);
});

describe('the probe process, bounded', () => {
  it('a hung agent: killed at the deadline with its peer, said as a timeout, nothing left', async () => {
    const t0 = performance.now();
    const f = await probe({ FAKE_NIXL: 'hang' }, { timeoutMs: 2000 });
    expect(performance.now() - t0).toBeLessThan(4000);
    expect(f.timedOut).toBe(true);
    expect(f.runError).toBe('the NIXL probe did not finish in 2 s and was killed');
    expect(groupMembers(f.pgid!)).toEqual([]);
  });

  it('an interpreter that raises SIGSEGV at exit (some NIXL builds): the result is out before, os._exit skips it', async () => {
    const f = await probe({ FAKE_NIXL: 'default', FAKE_NIXL_SEGV_AT_EXIT: '1' });
    expect(f.runError).toBeNull();
    expect(f.report?.stage).toBe('done');
    expect(f.report?.targetExit).toBe(0);
  });

  it('a setting with no recording: the fake says so and exits; the probe reports it without a result', async () => {
    const f = await probe({ FAKE_NIXL: 'by-env', UCX_TLS: 'rc' });
    expect(f.runError).toBe("the NIXL probe ended (exit 3) without a result: fake nixl: no recording of the real NIXL with UCX_TLS='rc' UCX_MM_ERROR_HANDLING=''");
    expect(groupMembers(f.pgid!)).toEqual([]);
  });

  it('NIXL not importable: said with the import error', async () => {
    const f = await probe({});
    expect(f.notImportable).toBe("ModuleNotFoundError: No module named 'nixl._api'");
  });

  it('an interpreter that is not there', async () => {
    const f = await probeNixl({ python: '/nonexistent/python9', env: { PATH: '/usr/bin:/bin' }, mem: 'dram', timeoutMs: 3000 });
    expect(f.runError).toBe('/nonexistent/python9 not found');
    expect(f.report).toBeNull();
  });
});
