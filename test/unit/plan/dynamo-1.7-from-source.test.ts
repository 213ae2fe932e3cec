import { describe, expect, it } from 'vitest';
import { loadRecipe } from '../../../src/host/files/recipes.js';
import { buildPlan } from '../../../src/plan/build.js';
import { chooseRelease } from '../../../src/plan/choose-release.js';
import {
  BUILDS, FROM_SOURCE, NEWEST_KNOWN, SOURCE_BUILDS, SUPPORTED_BELOW, buildOf, releaseFor, sourceBuildOf, versionSupport,
} from '../../../src/plan/dynamo-releases.js';
import { archGap, installedBuild } from '../../../src/plan/release-fixes.js';
import { REMOVED_ROUTER_FLAGS, removedFlagOf } from '../../../src/plan/router-flags.js';
import { chooseSetup } from '../../../src/plan/setup-choice.js';
import { UserError } from '../../../src/errors.js';

// Dynamo 1.7 (2026-11-23) is in the release table from upstream source and release notes only: no
// 1.7 wheel on this package index, nothing run here. Its plans differ from 1.6's only where the
// source says so (the KV router's scoring flags are gone); setup never installs it; doctor warns.

const RUN = '/state/runs/r1';
const plan = async (name: string, version: string | null, sets: string[] = []) =>
  buildPlan({ recipe: await loadRecipe(name, sets), runDir: RUN, gpuTotalMiB: 8188, dynamoVersion: version });
const argvOf = (p: Awaited<ReturnType<typeof plan>>, name: string) => p.processes.find((x) => x.name === name)!.argv;
const gpu = (driverVersion: string, cudaVersion: string, computeCaps: string[]) => ({ driverVersion, cudaVersion, computeCaps });

describe('Dynamo 1.7 in the release table: from source, not run here', () => {
  it('is the newest entry, a support level of its own up to 1.8.0', () => {
    expect(FROM_SOURCE).toBe('1.7.0');
    expect(NEWEST_KNOWN).toBe('1.7.0');
    expect(SUPPORTED_BELOW).toBe('1.8.0');
    expect(versionSupport('1.6.1')).toBe('verified');
    expect(versionSupport('1.7.0')).toBe('from-source');
    expect(versionSupport('1.7.1')).toBe('from-source');
    expect(versionSupport('1.8.0')).toBe('newer');
    const r = releaseFor('1.7.0');
    expect(r).toMatchObject({ version: '1.7.0', plannedFor: '1.7.0', assumed: false });
    expect(r.facts.routerPolicyFileOnly).toBe(true);
    expect(releaseFor('1.6.1').facts.routerPolicyFileOnly).toBe(false);
    // Newer than the table: the newest entry's facts (1.7's), as the python.env warning says.
    expect(releaseFor('1.8.2').facts.since).toBe('1.7.0');
  });

  it('vLLM 0.33.0 build: torch 2.14.0, CUDA 13.0 (driver >= 580.65.06), Python 3.11-3.14, kernels sm_75..sm_120; what was not read is listed', () => {
    const b = sourceBuildOf('1.7.0')!;
    expect(b).toMatchObject({
      release: '1.7.0', vllm: '0.33.0', nixl: 'nixl 1.5.0', torch: '2.14.0', torchCuda: '13.0', vllmCuda: '13.0', cuda: '13.0',
      minDriver: '580.65.06', python: { min: '3.11', below: '3.15' }, placeholder: null,
    });
    expect(b.torchArchs).toEqual(['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '10.3', '12.0', '12.1']);
    expect(b.vllmArchs).toEqual(['7.5', '8.0', '8.6', '8.9', '9.0', '10.0', '12.0']);
    expect(sourceBuildOf('1.7.1')).toMatchObject({ ...b, release: '1.7.1', sources: expect.any(Array), unread: expect.any(Array) });
    expect(b.sources.join('\n')).toMatch(/docs\.nvidia\.com\/dynamo\/v1\.7\.1\/reference\/releases\/deprecations/);
    expect(b.sources.join('\n')).toMatch(/vllm 0\.33\.0 METADATA: torch==2\.14\.0, Requires-Python >=3\.11,<3\.15/);
    // No source claims ai-dynamo 1.7.0's own METADATA was read: it says it was not.
    expect(b.sources.join('\n')).not.toMatch(/ai-dynamo 1\.7\.0 METADATA/);
    expect(b.unread.join('\n')).toMatch(/ai-dynamo 1\.7\.0 METADATA .* not read: no 1\.7 wheel on this package index/);
    expect(b.unread.join('\n')).toMatch(/aisimulate/);
    expect(SOURCE_BUILDS.map((x) => x.release)).toEqual(['1.7.0', '1.7.1']);
  });

  it('setup never chooses it: not among the installable builds, chooseRelease picks 1.6.1 on a machine 1.7 would run on', () => {
    expect(buildOf('1.7.0')).toBeNull();
    expect(BUILDS.map((b) => b.release)).not.toContain('1.7.0');
    const c = chooseRelease({ driverVersion: '595.71.05', driverCuda: '13.2', computeCapability: '8.9', python: '3.12.3' });
    expect(c).toMatchObject({ ok: true, release: '1.6.1' });
  });

  it('setup --release 1.7.0: refused as a flag, saying it is from source and not run here, and what would do', () => {
    for (const machine of [null, gpu('595.71.05', '13.2', ['8.9'])]) {
      const c = chooseSetup(machine, { release: '1.7.0' }, '3.12.3');
      expect(c).toEqual({
        ok: false,
        flag: '--release',
        reasons: ['--release 1.7.0 is known from source, not run here: no ai-dynamo 1.7.0 wheel was on the package index dynamo-dev was built against, so setup does not install it (its vllm extra pins vLLM 0.33.0, torch 2.14.0, CUDA 13.0, Python >= 3.11)'],
        wouldFit: ['--release 1.6.1', 'install ai-dynamo 1.7.0 yourself where an index has it and pass its interpreter with --python: up plans for its flags and doctor warns that it is not run here'],
      });
    }
    expect(chooseSetup(null, { release: '1.8.0' })).toMatchObject({ ok: false, reasons: ['--release 1.8.0 is newer than the release table knows'] });
  });

  it('doctor judges an installed 1.7 by its source build: torch 2.14.0 is 1.7\'s, a GPU below sm_75 has no kernels', () => {
    expect(installedBuild('1.7.0', '2.14.0+cu130')?.release).toBe('1.7.0');
    expect(installedBuild('1.7.0', '2.13.0')).toBeNull();
    expect(archGap(installedBuild('1.7.0', '2.14.0'), '7.0')).toBe('ai-dynamo 1.7.0\'s torch 2.14.0 and vLLM 0.33.0 have kernels for sm_75..sm_121 only');
    expect(archGap(installedBuild('1.7.0', '2.14.0'), '8.6')).toBeNull();
  });
});

describe('plans for 1.7: the router scoring flags are gone', () => {
  it('the built-in recipes plan the same argv on 1.7 as on 1.6.1: none passes a removed flag', async () => {
    for (const recipe of ['agg', 'agg-router', 'agg-router-approx', 'disagg-same-gpu', 'mocker']) {
      const p16 = await plan(recipe, '1.6.1');
      const p17 = await plan(recipe, '1.7.0');
      expect(p17.processes.map((p) => [p.name, p.argv, p.env])).toEqual(p16.processes.map((p) => [p.name, p.argv, p.env]));
      for (const p of p17.processes) expect(p.argv.filter((a) => removedFlagOf(a) !== null), `${recipe} ${p.name}`).toEqual([]);
    }
    expect(argvOf(await plan('agg-router-approx', '1.7.0'), 'frontend')).toEqual([
      'python3', '-m', 'dynamo.frontend', '--http-port', '8000', '--router-mode', 'kv', '--no-router-kv-events', '--discovery-backend', 'file',
    ]);
  });

  it('a recipe passing one to the frontend is refused on 1.7 (bad input, naming the field, flag and where the setting lives now); 1.6.1 still takes it', async () => {
    const sets = ['frontend.args=["--router-temperature","0.5"]'];
    expect(argvOf(await plan('agg-router', '1.6.1', sets), 'frontend')).toContain('--router-temperature');
    const err = await plan('agg-router', '1.7.0', sets).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe(
      'frontend.args: --router-temperature was removed in Dynamo 1.7.0 (deprecated in 1.6): its setting is router_temperature in the default policy\'s parameters (worker_selection.instances[].parameters) of the YAML given with --router-policy-config',
    );
    expect((err as UserError).fix).toBe('give the frontend --router-policy-config FILE holding that setting (frontend.args), or use a 1.6 release, which still takes --router-temperature');
    // The = form, an old alias, and a variable in the recipe's env are refused alike.
    await expect(plan('agg-router', '1.7.1', ['frontend.args=["--kv-overlap-score-weight=2"]'])).rejects.toThrow(/^frontend\.args: --kv-overlap-score-weight was removed in Dynamo 1\.7\.0 \(deprecated in 1\.6; this plan is for 1\.7\.1\): .*prefill_load_scale/);
    await expect(plan('agg-router', '1.7.0', ['frontend.env={"DYN_ROUTER_TEMPERATURE":"0.5"}'])).rejects.toThrow(
      /^frontend\.env\.DYN_ROUTER_TEMPERATURE: DYN_ROUTER_TEMPERATURE \(the variable of --router-temperature\) was removed in Dynamo 1\.7\.0 \(deprecated in 1\.6\): its setting is router_temperature/,
    );
    await expect(plan('agg-router', '1.7.0', ['env={"DYN_ROUTER_QUEUE_THRESHOLD":"2"}'])).rejects.toThrow(/^env\.DYN_ROUTER_QUEUE_THRESHOLD: .*policy_classes\[\]\.prefill_busy_threshold_frac/);
    // The flags that stay: --router-mode, --no-router-kv-events, --router-policy-config itself.
    const kept = await plan('agg-router', '1.7.0', ['frontend.args=["--router-policy-config","/tmp/policy.yaml","--router-ttl-secs","60"]']);
    expect(argvOf(kept, 'frontend')).toContain('--router-policy-config');
  });

  it('the list: the six scoring flags, --shared-cache-multiplier, --load-aware and the queue/policy flags, each with its variables', () => {
    expect(REMOVED_ROUTER_FLAGS.map((f) => f.flag)).toEqual([
      '--router-kv-overlap-score-credit', '--router-kv-overlap-score-credit-decay', '--router-kv-overlap-score-weight', '--router-prefill-load-scale',
      '--router-decode-active-request-weight', '--router-temperature', '--shared-cache-multiplier', '--load-aware', '--router-queue-threshold',
      '--router-queue-policy', '--router-prefill-policy', '--router-decode-policy',
    ]);
    for (const f of REMOVED_ROUTER_FLAGS) expect(f.env.length, f.flag).toBeGreaterThan(0);
    expect(removedFlagOf('--router-mode')).toBeNull();
    expect(removedFlagOf('--no-router-kv-events')).toBeNull();
    expect(removedFlagOf('--no-load-aware')?.flag).toBe('--load-aware');
  });
});
